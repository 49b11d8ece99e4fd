import { checkReadiness, healthResponse } from "@/server/http/health";

export const dynamic = "force-dynamic";

/** The readiness check under its older name, kept for callers that use it. */
export async function GET() {
  return healthResponse(await checkReadiness());
}
