import type { Invariant, Violation } from "./types";

/** PostgreSQL's own restarts may cost a 500; this long around one they are not counted. */
const DATABASE_SLACK_MS = 5000;

/**
 * Answers right in kind: the provider's trouble is a 503 with Retry-After (retry with the same
 * key), never a 500; the admin's reconciliation reports an unreachable provider, never a 500.
 */
export const answersInKind: Invariant = {
  name: "answers right in kind (503 + Retry-After, never 500)",
  check(e) {
    const j = e.journal;
    const duringDatabase = (from: number, to: number) =>
      j.overlaps(j.databaseOutages, from, to, DATABASE_SLACK_MS);
    const out: Violation[] = [];
    for (const a of j.answers) {
      if (a.status === 500 && !duringDatabase(a.sentAt, a.answeredAt)) {
        const down = j.overlaps(j.providerOutages, a.sentAt, a.answeredAt)
          ? " while the provider was down"
          : "";
        out.push({
          invariant: this.name,
          detail: `payment (key ${a.key}) answered 500${down} where the product promises 503 + Retry-After`,
        });
      }
      if (a.status === 503 && a.retryAfter === null)
        out.push({ invariant: this.name, detail: `payment (key ${a.key}) answered 503 without Retry-After` });
    }
    for (const op of j.operators) {
      if (op.status === 500 && !duringDatabase(op.at - 15_000, op.at))
        out.push({ invariant: this.name, detail: `operator's ${op.kind} answered 500 (${op.detail})` });
    }
    return out;
  },
};
