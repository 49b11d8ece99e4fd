import { checkLiveness, healthResponse } from "@/server/http/health";

export const dynamic = "force-dynamic";

export function GET() {
  return healthResponse(checkLiveness());
}
