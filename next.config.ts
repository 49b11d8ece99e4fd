import type { NextConfig } from "next";
import "./server/env";
import { API_SECURITY_HEADERS, STATIC_SECURITY_HEADERS } from "./server/http/security-headers";

// Importing the env module makes a bad environment fail the build and the start, naming the variable.
const nextConfig: NextConfig = {
  poweredByHeader: false,
  // A deployment runs `.next/standalone/server.js` with only the files it traces (docs/production.md).
  output: "standalone",
  // Separate build folders let two builds (say, two e2e runs) share a checkout.
  distDir: process.env.NEXT_DIST_DIR ?? ".next",
  async headers() {
    return [
      { source: "/:path*", headers: STATIC_SECURITY_HEADERS },
      // The same set the API tier (server/http/node-server.ts) sends.
      { source: "/api/:path*", headers: API_SECURITY_HEADERS },
    ];
  },
};

export default nextConfig;
