import type { NextConfig } from "next";
import "./server/env";

// Importing the env module makes a bad environment fail the build and the start, naming the variable.
const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Separate build folders let two builds (say, two e2e runs) share a checkout.
  distDir: process.env.NEXT_DIST_DIR ?? ".next",
};

export default nextConfig;
