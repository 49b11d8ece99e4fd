import type { MerchantEndpoint } from "../journal";
import type { ReceiverRecord } from "../receiver-records";
import type { Evidence } from "./types";

export type RequestRecord = Extract<ReceiverRecord, { kind: "request" }>;

/** Every request the receivers recorded, with the endpoint the checker registered at it. */
export function receivedRequests(
  e: Evidence,
): { request: RequestRecord; endpoint: MerchantEndpoint | null }[] {
  const byName = new Map(e.journal.merchants.endpoints.map((x) => [x.name, x]));
  return e.journal.merchants.records
    .filter((r): r is RequestRecord => r.kind === "request")
    .map((request) => ({ request, endpoint: byName.get(request.receiver) ?? null }));
}

/**
 * When the attempt started, from its `webhook-timestamp` (whole seconds, rounded down: the
 * attempt started in the second after this), or null when it has none.
 */
export function attemptStartMs(r: RequestRecord): number | null {
  const seconds = Number(r.timestamp);
  return r.timestamp && Number.isInteger(seconds) ? seconds * 1000 : null;
}

export const describeRequest = (r: RequestRecord) =>
  `request ${r.id ?? "(no webhook-id)"} to ${r.receiver} received ${new Date(r.receivedAt).toISOString()}`;
