import { metricsResponse } from "@/server/admin/metrics";
import { db } from "@/server/db";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return metricsResponse(req, db());
}
