import { answerReadiness } from "@/server/http/api-routes";

export const dynamic = "force-dynamic";

/** The readiness check under its older name, kept for callers that use it. */
export const GET = answerReadiness;
