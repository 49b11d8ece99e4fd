import type { Charge } from "../../../server/provider";
import type { Books, OurPayment } from "../books";
import { Journal } from "../journal";
import { NO_WEBHOOKS } from "../webhook-books";
import type { Evidence } from "./types";

/** The invariants' unit tests: books with nothing in them but what a test names. */
export function evidenceOf(books: Partial<Books>, journal = new Journal()): Evidence {
  const empty: Books = {
    charges: [],
    payments: [],
    providerRefunds: [],
    refunds: [],
    theirEvents: [],
    ourEvents: [],
    unbalancedCurrencies: [],
    unbalancedTransactions: [],
    reportAfterDrain: null,
    reportAfterOutage: null,
    pendingKeyStates: new Map(),
    actions: [],
    challenges: [],
    readAt: Date.parse("2026-12-05T00:10:00.000Z"),
    webhooks: NO_WEBHOOKS,
  };
  return { journal, books: { ...empty, ...books }, rogueIds: new Set() };
}

/** A provider payment of 1000 eur, succeeded unless a test says otherwise. */
export const providerPayment = (more: Partial<Charge> = {}): Charge => ({
  id: "pi_1",
  amount: 1000,
  currency: "eur",
  paymentMethod: "pm_card_visa",
  status: "succeeded",
  amountCapturable: 0,
  amountReceived: 1000,
  nextActionUrl: null,
  cancellationReason: null,
  failureCode: null,
  failureMessage: null,
  createdAt: "2026-12-05T00:00:00.000Z",
  metadata: { payment_id: "p1", order_id: "o1" },
  ...more,
});

/** One of our payments of 1000 EUR on pi_1: an automatic one, succeeded and posted, by default. */
export const ourPayment = (more: Partial<OurPayment> = {}): OurPayment => ({
  id: "p1",
  orderId: "o1",
  accountId: "a1",
  status: "succeeded",
  failureCode: null,
  providerChargeId: "pi_1",
  createdAt: Date.parse("2026-12-05T00:00:00.000Z"),
  keyId: "1",
  key: "k1",
  clearingEntries: 1,
  amountMinor: 1000,
  paymentMethod: "pm_card_visa",
  captureMethod: "automatic",
  capturedMinor: null,
  captureBefore: null,
  postedMinor: 1000,
  holds: 0,
  heldMinor: 0,
  releases: [],
  releasedMinor: 0,
  ...more,
});
