import { ApiReference } from "@scalar/nextjs-api-reference";
import { OPENAPI_PATH } from "@/server/http/openapi";

// Scalar's viewer, its script served by this app (./reference.js) rather than from a CDN, and
// without the parts that call Scalar's services (fonts, telemetry, AI agent, MCP, toolbar).
export const GET = ApiReference({
  url: OPENAPI_PATH,
  cdn: "/docs/api/reference.js",
  pageTitle: "Idempotent Checkout API",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
});
