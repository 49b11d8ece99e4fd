import { sql } from "@idempotent-checkout/idempotency/sql";
import { rawQuery } from "../db";
import { env } from "../env";
import { idempotency } from "../keys";
import { logger } from "../log";
import { operatorsAccount } from "../refunds";
import { type AuthorizationDeps, CANCEL_PROCEDURE, cancel, type StoredActionParams } from "./operations";

/**
 * The expiry's keys begin with a character no client can send (a key is printable ASCII), so an
 * operator's key can never take an expiry's place in the operators' key space.
 */
export const EXPIRY_KEY_PREFIX = "expiry\u00b7";

/**
 * One pass of the expiry: every authorization past its deadline is canceled at the provider and its
 * hold released, as a cancel whose key the server makes from the payment's id. The same key every
 * pass, so across restarts, instances and a failover each expiry runs once: a pass that finds the
 * key done replays it, one that finds it in flight leaves it, one that finds it abandoned takes it
 * over (the cancel's completer drives it too). Capture and cancel race it through the one open
 * action per payment: whichever phase 1 commits first wins.
 */
export async function expireAuthorizations(
  deps: AuthorizationDeps,
  opts: { limit?: number } = {},
): Promise<number> {
  const due = await rawQuery<{ id: string }>(
    deps.prisma,
    sql`SELECT id FROM payments WHERE status = 'authorized' AND capture_before <= now()
         ORDER BY capture_before LIMIT ${opts.limit ?? 20}`,
  );
  if (due.length === 0) return 0;
  const scope = await operatorsAccount(deps.prisma);
  let expired = 0;
  for (const { id } of due) {
    const params: StoredActionParams = { id, reason: "expiry" };
    const ran = await idempotency.run(
      deps.prisma,
      {
        accountId: scope.id,
        key: `${EXPIRY_KEY_PREFIX}${id}`,
        procedure: CANCEL_PROCEDURE,
        params,
        leaseSeconds: env.PAYMENT_LEASE_SECONDS,
      },
      (owner) => cancel.execute(deps, owner, { paymentId: id, reason: "expiry", createdBy: "expiry" }),
    );
    if (ran.outcome !== "ran") continue;
    if (ran.result.ok) expired++;
    else logger.info({ paymentId: id, err: ran.result.error.message }, "authorization not expired this pass");
  }
  return expired;
}
