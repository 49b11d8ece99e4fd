import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks defines it. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The `webhook-signature` header: one `v1,…` signature per live secret, space-separated, so a
 * receiver holding either secret during a rotation verifies the delivery.
 */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(" ");
}
