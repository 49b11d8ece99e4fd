import type { TTopic } from "../../../server/outbox";
import { webhookEventType } from "../../../server/webhooks";
import type { Invariant, Violation } from "./types";

/** Overdue by more than this, a pending message has nobody trying it: past the lease and the pollers' backoff. */
export const STUCK_AFTER_MS = 60_000;

/**
 * Every event for an endpoint enabled at the end has its message, and no message is silently
 * lost: each one marked delivered was answered 2xx by its receiver (a line says so, written
 * before the answer), and each still pending is due again soon (visibly retrying); a failed one
 * is visible as failed. Any message marked delivered, whatever its endpoint is now, needs its 2xx.
 */
export const webhooksDelivered: Invariant = {
  name: "every webhook event for an enabled endpoint delivered with a 2xx or visibly failing",
  check(e) {
    const w = e.books.webhooks;
    const violations: Violation[] = [];
    const twoXx = new Set<string>();
    for (const r of e.journal.merchants.records) {
      if (r.id && r.status !== null && r.status >= 200 && r.status < 300) twoXx.add(r.id);
    }
    const message = new Map(w.messages.map((m) => [`${m.eventId}\n${m.endpointId}`, m]));
    const enabled = w.endpoints.filter((x) => x.disabledAt === null && x.deletedAt === null);
    for (const endpoint of enabled) {
      const owed = w.events.filter(
        (ev) =>
          ev.accountId === endpoint.accountId &&
          ev.createdAt >= endpoint.createdAt &&
          endpoint.eventTypes.includes(webhookEventType(ev.topic as TTopic)),
      );
      for (const ev of owed)
        if (!message.has(`${ev.id}\n${endpoint.id}`))
          violations.push({
            invariant: this.name,
            detail: `event ${ev.id} (${ev.topic}) for enabled endpoint ${endpoint.id} (${endpoint.url}) has no message: lost before delivery`,
          });
    }
    const enabledIds = new Set(enabled.map((x) => x.id));
    for (const m of w.messages) {
      if (m.status === "succeeded" && !twoXx.has(m.id))
        violations.push({
          invariant: this.name,
          detail: `message ${m.id} (${m.eventType}) is marked delivered after ${m.attempts} attempts (answers ${m.answers.join(", ")}), but no receiver answered it 2xx`,
        });
      if (
        m.status === "pending" &&
        enabledIds.has(m.endpointId) &&
        m.nextAttemptAt < e.books.readAt - STUCK_AFTER_MS
      )
        violations.push({
          invariant: this.name,
          detail: `message ${m.id} (${m.eventType}) is pending after ${m.attempts} attempts, due since ${new Date(m.nextAttemptAt).toISOString()}: nobody is trying it`,
        });
    }
    return violations;
  },
};
