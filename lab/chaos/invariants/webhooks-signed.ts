import { Webhook } from "standardwebhooks";
import type { SecretIssued } from "../journal";
import type { Invariant, Violation } from "./types";
import { attemptStartMs, describeRequest, receivedRequests } from "./webhook-records";

/** Standard Webhooks' receivers refuse a timestamp further than this from their clock. */
const TOLERANCE_MS = 5 * 60_000;

/**
 * Whether `header` carries the signature `secret` makes of this delivery: what `Webhook.verify`
 * checks, but against the receiving time's clock (verify compares the timestamp with now, and
 * the check runs minutes after the run).
 */
function signedWith(secret: string, id: string, startMs: number, body: string, header: string): boolean {
  const expected = new Webhook(secret).sign(id, new Date(startMs), body);
  return header.split(" ").includes(expected);
}

/**
 * The secrets the merchant holds when an attempt starts: the newest whose rotation had answered
 * (the merchant switches at once), and any whose rotation was still in flight in that second.
 */
function secretsAt(secrets: SecretIssued[], startMs: number) {
  const answered = secrets.filter((s) => s.answeredAt <= startMs).sort((a, b) => a.answeredAt - b.answeredAt);
  const inFlight = secrets.filter((s) => s.sentAt < startMs + 1000 && s.answeredAt > startMs);
  return { current: answered.at(-1), inFlight };
}

/**
 * Every delivered body verifies (Standard Webhooks, `standardwebhooks`) with the endpoint's secret
 * at the attempt's time, rotations during the run included; its timestamp within the tolerance
 * of when it arrived.
 */
export const webhooksSigned: Invariant = {
  name: "every delivered webhook verifies with the endpoint's secret at that time",
  check(e) {
    const violations: Violation[] = [];
    for (const { request: r, endpoint } of receivedRequests(e)) {
      if (!endpoint || endpoint.forbidden) continue;
      const startMs = attemptStartMs(r);
      if (!r.id || !r.signature || startMs === null) {
        violations.push({
          invariant: this.name,
          detail: `${describeRequest(r)} lacks a webhook-id, -timestamp or -signature`,
        });
        continue;
      }
      if (Math.abs(r.receivedAt - startMs) > TOLERANCE_MS) {
        violations.push({
          invariant: this.name,
          detail: `${describeRequest(r)} carries a timestamp ${Math.round((r.receivedAt - startMs) / 1000)} s off: refused by any receiver`,
        });
        continue;
      }
      const { current, inFlight } = secretsAt(
        e.journal.merchants.secrets.filter((s) => s.endpointId === endpoint.id),
        startMs,
      );
      const candidates = [current, ...inFlight].filter((s) => s !== undefined);
      const signature = r.signature;
      const id = r.id;
      if (candidates.some((s) => signedWith(s.secret, id, startMs, r.body, signature))) continue;
      // A rotation retried after a lost answer may have made a secret nobody saw, signing alone meanwhile.
      if (inFlight.some((s) => s.tries > 1)) continue;
      violations.push({
        invariant: this.name,
        detail: `${describeRequest(r)} does not verify with the secret of ${endpoint.name} at ${new Date(startMs).toISOString()}${current?.overlapSeconds !== null && current ? ` (rotated, overlap ${current.overlapSeconds} s)` : ""}`,
      });
    }
    return violations;
  },
};
