import { cancel, capture } from "./authorizations";
import type { Db } from "./db";
import { payment } from "./payments/operation";
import type { PaymentProvider } from "./provider";
import { refund } from "./refunds";

/**
 * Every keyed money operation: the completers run each, an operator's re-drive finds a key's by its
 * procedure. A new kind of money movement is added here once.
 */
export const MONEY_OPERATIONS = [payment, refund, capture, cancel] as const;

type Deps = { prisma: Db; provider: PaymentProvider };
export type MoneyOperation = Pick<(typeof MONEY_OPERATIONS)[number], "procedure"> & {
  complete: (deps: Deps, opts: Parameters<typeof payment.complete>[1]) => Promise<number>;
  redrive: (
    deps: Deps,
    keyId: bigint,
    opts: Parameters<typeof payment.redrive>[2],
  ) => ReturnType<typeof payment.redrive>;
};

/** The operation whose procedure claimed a key (payments when unknown). */
export function operationOf(procedure: string | undefined): MoneyOperation {
  return MONEY_OPERATIONS.find((op) => op.procedure === procedure) ?? payment;
}
