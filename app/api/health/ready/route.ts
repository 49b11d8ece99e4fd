import { checkReadiness, healthResponse } from "@/server/http/health";

export const dynamic = "force-dynamic";

export async function GET() {
  return healthResponse(await checkReadiness());
}
