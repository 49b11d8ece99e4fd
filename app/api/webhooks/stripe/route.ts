import { db } from "@/server/db";
import { handleProviderWebhook } from "@/server/http/provider-webhook";
import { paymentProvider } from "@/server/provider";

export const dynamic = "force-dynamic";

export function POST(req: Request) {
  return handleProviderWebhook(req, { prisma: db, provider: paymentProvider });
}
