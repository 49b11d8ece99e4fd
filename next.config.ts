import type { NextConfig } from "next";
import "./server/env";

// Importing the env module makes a bad environment fail the build and the start, naming the variable.
const nextConfig: NextConfig = {
  poweredByHeader: false,
};

export default nextConfig;
