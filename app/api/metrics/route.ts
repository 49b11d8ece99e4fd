import { db } from "@/server/db";
import { metricsResponse } from "@/server/http/metrics";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return metricsResponse(req, db());
}
