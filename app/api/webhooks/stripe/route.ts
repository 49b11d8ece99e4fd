import { answerProviderWebhook } from "@/server/http/api-routes";

export const dynamic = "force-dynamic";

export const POST = answerProviderWebhook;
