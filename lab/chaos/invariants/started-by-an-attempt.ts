import type { Invariant } from "./types";

/** A clock step between the checker's and PostgreSQL's reading of one instant, at most. */
const SLACK_MS = 1500;

/**
 * A payment comes into being only while one of its key's requests runs: no background job or
 * operator creates (and charges) a payment for a key whose shopper never got that far.
 */
export const paymentsStartedByAttempts: Invariant = {
  name: "every payment created by a request of its key",
  check(e) {
    const windows = new Map<string, { from: number; to: number }[]>();
    for (const a of e.journal.answers) {
      const id = `${a.accountId}\n${a.key}`;
      windows.set(id, [...(windows.get(id) ?? []), { from: a.sentAt, to: a.answeredAt }]);
    }
    return e.books.payments.flatMap((p) => {
      if (!p.key) return [];
      const mine = windows.get(`${p.accountId}\n${p.key}`) ?? [];
      if (mine.some((w) => w.from - SLACK_MS <= p.createdAt && p.createdAt <= w.to + SLACK_MS)) return [];
      const last = mine.reduce((t, w) => Math.max(t, w.to), 0);
      return [
        {
          invariant: this.name,
          detail: `payment ${p.id} (${p.status}) was created ${last ? `${Math.round((p.createdAt - last) / 1000)} s after the last request of` : "with no request of"} key ${p.key}, by no attempt of it`,
        },
      ];
    });
  },
};
