import type { Receipt } from "../generated/prisma/client";
import type { TReceiptLine } from "../outbox";

/** The receipt as orders.get shows it. */
export function receiptView(r: Receipt) {
  return {
    number: r.number,
    issuedAt: r.issuedAt.toISOString(),
    lines: r.lines as TReceiptLine[],
    total: r.totalMinor,
    currency: r.currency,
  };
}
export type TReceiptView = ReturnType<typeof receiptView>;
