import type { Invariant, Violation } from "./types";

/** Around a PostgreSQL restart (PgBouncer logs in again, pools reconnect) 500s are not counted. */
const DATABASE_SLACK_MS = 10_000;

/**
 * Answers right in kind: the provider's trouble is a 503 with Retry-After (retry with the same
 * key), never a 500; the admin's reconciliation reports an unreachable provider, never a 500.
 * A 500 with no trouble at the provider and no database restart near it is a violation too; so
 * is an operator's capture or cancel answered 500 away from a database restart.
 */
export const answersInKind: Invariant = {
  name: "answers right in kind (503 + Retry-After, never 500)",
  check(e) {
    const j = e.journal;
    const duringDatabase = (from: number, to: number) =>
      j.overlaps(j.databaseOutages, from, to, DATABASE_SLACK_MS);
    const paymentOfKey = new Map(e.books.payments.map((p) => [`${p.accountId}\n${p.key}`, p.id]));
    const out: Violation[] = [];
    for (const a of j.answers) {
      if (a.status === 503 && a.retryAfter === null)
        out.push({ invariant: this.name, detail: `payment (key ${a.key}) answered 503 without Retry-After` });
      if (a.status !== 500) continue;
      const paymentId = paymentOfKey.get(`${a.accountId}\n${a.key}`);
      const faults = new Set(paymentId ? (j.faultsByPayment.get(paymentId) ?? []) : []);
      if (j.overlaps(j.providerOutages, a.sentAt, a.answeredAt)) faults.add("down");
      if (faults.size > 0) {
        out.push({
          invariant: this.name,
          detail: `payment (key ${a.key}) answered 500 after the provider's ${[...faults].join(", ")}, where the product promises 503 + Retry-After`,
        });
      } else if (!duringDatabase(a.sentAt, a.answeredAt)) {
        out.push({
          invariant: this.name,
          detail: `payment (key ${a.key}) answered 500 with no fault at the provider and no database restart near it`,
        });
      }
    }
    // An operator's capture or cancel: the provider's trouble is a 503 with Retry-After as well.
    for (const a of j.authorizationAnswers) {
      const what = `${a.action} of payment ${a.paymentId} (key ${a.key})`;
      if (a.status === 503 && a.retryAfter === null)
        out.push({ invariant: this.name, detail: `${what} answered 503 without Retry-After` });
      if (a.status === 500 && !duringDatabase(a.sentAt, a.answeredAt))
        out.push({ invariant: this.name, detail: `${what} answered 500 with no database restart near it` });
    }
    for (const op of j.operators) {
      if (op.status === 500 && !duringDatabase(op.at - 15_000, op.at))
        out.push({ invariant: this.name, detail: `operator's ${op.kind} answered 500 (${op.detail})` });
    }
    return out;
  },
};
