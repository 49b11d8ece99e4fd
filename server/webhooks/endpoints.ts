import { z } from "zod";
import type { Db } from "../db";
import { newId } from "../db";
import { domainErrors } from "../errors";
import { type AddressPolicy, checkEndpointUrl, policyFromEnv } from "./address-guard";
import { WEBHOOK_EVENT_TYPES } from "./event-types";
import { newWebhookSecret } from "./secrets";

/** How long the old secret keeps signing after a rotation, unless asked otherwise. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;
export const MAX_ENDPOINTS_PER_ACCOUNT = 16;

export const ZWebhookEndpoint = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    status: z.enum(["enabled", "disabled"]),
    /** gone (the receiver answered 410), failing (every attempt failed for days), merchant. */
    disabledReason: z.string().nullable(),
    disabledAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: "WebhookEndpoint" });
export type TWebhookEndpointView = z.infer<typeof ZWebhookEndpoint>;

interface EndpointRow {
  id: string;
  url: string;
  eventTypes: string[];
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

export function endpointView(row: EndpointRow): TWebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.eventTypes,
    status: row.disabledAt ? "disabled" : "enabled",
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Registers an endpoint after its URL passed the address rules, with its first secret: the
 * answer is the only time the secret is shown.
 */
export async function registerEndpoint(
  prisma: Db,
  accountId: string,
  input: { url: string; events: readonly string[] },
  policy: AddressPolicy = policyFromEnv(),
): Promise<TWebhookEndpointView & { secret: string }> {
  const unknown = input.events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0 || input.events.length === 0)
    throw domainErrors.invalid(`events must be some of ${WEBHOOK_EVENT_TYPES.join(", ")}.`, {
      reason: "webhook_events_invalid",
    });
  const checked = await checkEndpointUrl(input.url, policy);
  if (!checked.ok)
    throw domainErrors.invalid(`The endpoint URL ${checked.reason}.`, { reason: "webhook_url_refused" });
  const count = await prisma.webhookEndpoint.count({ where: { accountId, deletedAt: null } });
  if (count >= MAX_ENDPOINTS_PER_ACCOUNT)
    throw domainErrors.invalid(`An account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints.`, {
      reason: "webhook_endpoints_limit",
    });
  const id = newId();
  const secret = newWebhookSecret();
  const [row] = await prisma.$transaction([
    prisma.webhookEndpoint.create({
      data: { id, accountId, url: input.url, eventTypes: [...new Set(input.events)] },
    }),
    prisma.webhookSecret.create({ data: { id: newId(), endpointId: id, secret } }),
  ]);
  return { ...endpointView(row), secret };
}

export async function listEndpoints(prisma: Db, accountId: string): Promise<TWebhookEndpointView[]> {
  const rows = await prisma.webhookEndpoint.findMany({
    where: { accountId, deletedAt: null },
    orderBy: { createdAt: "asc" },
  });
  return rows.map(endpointView);
}

async function ownEndpoint(prisma: Db, accountId: string, endpointId: string) {
  const row = await prisma.webhookEndpoint.findFirst({
    where: { id: endpointId, accountId, deletedAt: null },
  });
  if (!row) throw domainErrors.notFound("Webhook endpoint");
  return row;
}

/** Deleted at once: nothing is sent to it afterwards; its messages and attempts stay readable. */
export async function deleteEndpoint(prisma: Db, accountId: string, endpointId: string): Promise<void> {
  const { count } = await prisma.webhookEndpoint.updateMany({
    where: { id: endpointId, accountId, deletedAt: null },
    data: { deletedAt: new Date() },
  });
  if (count === 0) throw domainErrors.notFound("Webhook endpoint");
}

/** Enables a disabled endpoint again (its pending messages go out) or disables it by hand. */
export async function setEndpointEnabled(
  prisma: Db,
  accountId: string,
  endpointId: string,
  enabled: boolean,
): Promise<TWebhookEndpointView> {
  await ownEndpoint(prisma, accountId, endpointId);
  const row = await prisma.webhookEndpoint.update({
    where: { id: endpointId },
    data: enabled
      ? { disabledAt: null, disabledReason: null, failingSince: null }
      : { disabledAt: new Date(), disabledReason: "merchant" },
  });
  return endpointView(row);
}

/**
 * A new secret, shown once; the current ones keep signing for `overlapSeconds` (0: the old stop
 * at once), so a receiver can switch without refusing a delivery.
 */
export async function rotateSecret(
  prisma: Db,
  accountId: string,
  endpointId: string,
  overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS,
): Promise<{ secret: string; previousExpiresAt: string }> {
  await ownEndpoint(prisma, accountId, endpointId);
  const secret = newWebhookSecret();
  const expiresAt = new Date(Date.now() + overlapSeconds * 1000);
  await prisma.$transaction([
    prisma.webhookSecret.updateMany({
      where: { endpointId, OR: [{ expiresAt: null }, { expiresAt: { gt: expiresAt } }] },
      data: { expiresAt },
    }),
    prisma.webhookSecret.create({ data: { id: newId(), endpointId, secret } }),
  ]);
  return { secret, previousExpiresAt: expiresAt.toISOString() };
}

export { ownEndpoint };
