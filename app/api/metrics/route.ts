import { answerMetrics } from "@/server/http/api-routes";

export const dynamic = "force-dynamic";

export const GET = answerMetrics;
