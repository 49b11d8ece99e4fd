import type { Invariant } from "./types";

/** Double entry: every transaction, and so every currency, sums to zero. */
export const ledgerBalanced: Invariant = {
  name: "the ledger balanced",
  check(e) {
    return [
      ...e.books.unbalancedCurrencies.map((c) => ({
        invariant: this.name,
        detail: `${c.currency} entries sum to ${c.sum}, not 0`,
      })),
      ...e.books.unbalancedTransactions.map((t) => ({
        invariant: this.name,
        detail: `transaction ${t.transactionId} sums to ${t.sum}, not 0`,
      })),
    ];
  },
};
