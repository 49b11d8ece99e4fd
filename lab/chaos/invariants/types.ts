import type { Charge } from "../../../server/provider";
import type { Books, OurPayment, Report } from "../books";
import type { Journal } from "../journal";

export interface Violation {
  invariant: string;
  detail: string;
}

/** What every check reads: the journal of the run, both sets of books, the rogue charges' ids. */
export interface Evidence {
  journal: Journal;
  books: Books;
  rogueIds: Set<string>;
}

export interface Invariant {
  name: string;
  check(evidence: Evidence): Violation[];
}

export const succeeded = (c: Charge) => c.status === "succeeded";

/** The charges the app made (everything but the rogue ones). */
export const appCharges = (e: Evidence) => e.books.charges.filter((c) => !e.rogueIds.has(c.id));

export const paymentsById = (e: Evidence) => new Map(e.books.payments.map((p) => [p.id, p]));

export const reported = (report: Report | null, pick: (m: Report["mismatches"][number]) => boolean) =>
  (report?.mismatches ?? []).some(pick);

export const describePayment = (p: OurPayment) =>
  `payment ${p.id} (order ${p.orderId}, ${p.status}${p.failureCode ? `: ${p.failureCode}` : ""})`;

export const chargesById = (e: Evidence) => new Map(e.books.charges.map((c) => [c.id, c]));

/** The provider's payment of one of ours, or undefined (none made, or not read). */
export const chargeOf = (charges: Map<string, Charge>, p: OurPayment) =>
  p.providerChargeId ? charges.get(p.providerChargeId) : undefined;
