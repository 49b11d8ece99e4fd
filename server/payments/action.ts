import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { sql } from "@idempotent-checkout/idempotency/sql";
import { rawQuery } from "../db";
import { env } from "../env";
import { domainErrors } from "../errors";
import type { KeyOwner } from "../keys";
import { askProvider, providerFailure } from "../operation";
import { type Charge, isProviderError, type PaymentProvider } from "../provider";
import type { TrackedPayment } from "./tracked";
import { paymentView, type TPaymentView } from "./views";

/** An authorization's deadline: AUTHORIZATION_TTL_SECONDS from the provider's own creation time. */
export function captureDeadline(charge: Pick<Charge, "createdAt">): Date {
  return new Date(Date.parse(charge.createdAt) + env.AUTHORIZATION_TTL_SECONDS * 1000);
}

/**
 * A payment awaiting the shopper's 3-D Secure step. Until PAYMENT_ACTION_TIMEOUT_SECONDS after the
 * Pay press the answer is "requires_action" with where to send the shopper: not final, so not
 * stored (a retry with the same key asks the provider again; the return, the provider's event or
 * the completer settles it, whichever comes first). Past it, the payment is canceled at the
 * provider with a key derived from ours, and settled as the provider then says: canceled, or
 * finished after all if the shopper completed the step meanwhile.
 */
export async function awaitingAction(
  deps: { prisma: Parameters<typeof rawQuery>[0]; provider: PaymentProvider },
  owner: KeyOwner,
  row: TrackedPayment,
  charge: Charge,
): Promise<{ view: TPaymentView } | { charge: Charge }> {
  const [state] = await rawQuery<{ expired: boolean }>(
    deps.prisma,
    sql`SELECT created_at <= now() - make_interval(secs => ${env.PAYMENT_ACTION_TIMEOUT_SECONDS}) AS expired
          FROM payments WHERE id = ${row.id}::uuid AND status = 'pending'`,
  );
  // Settled meanwhile by another attempt that took our key over.
  if (!state) throw new LeaseLostError();
  if (state.expired) {
    // Read again just before the cancel: the charge above may be seconds old (a retry's listing, a
    // slow provider), and a shopper who finished the step meanwhile is settled as they finished it
    // (a manual payment's hold is cancelable, so a stale read would cancel an authorized payment).
    const now = await askProvider(
      () => deps.provider.getCharge(charge.id),
      domainErrors.paymentInFlightAtProvider,
    );
    if (now && now.status !== "requires_action") return { charge: now };
    return { charge: await cancelAbandoned(deps.provider, owner, charge) };
  }
  if (charge.nextActionUrl !== row.actionUrl) {
    // Kept so the order page can send the shopper back to the step after a reload.
    await rawQuery(
      deps.prisma,
      sql`UPDATE payments SET action_url = ${charge.nextActionUrl}, updated_at = now()
           WHERE id = ${row.id}::uuid AND status = 'pending'`,
    );
  }
  owner.notFinal(1);
  const view = paymentView({
    ...row,
    status: "requires_action",
    providerChargeId: charge.id,
    actionUrl: charge.nextActionUrl,
  });
  return { view };
}

async function cancelAbandoned(provider: PaymentProvider, owner: KeyOwner, charge: Charge): Promise<Charge> {
  try {
    return await provider.cancelCharge(charge.id, { reason: "abandoned" }, owner.derivedKey("cancel"));
  } catch (error) {
    if (!isProviderError(error)) throw error;
    if (error.kind !== "rejected" || error.code !== "payment_intent_unexpected_state")
      throw providerFailure(error, domainErrors.paymentInFlightAtProvider);
    // No longer cancelable: the shopper finished the step meanwhile. Settled as it now stands.
    const now = await askProvider(
      () => provider.getCharge(charge.id),
      domainErrors.paymentInFlightAtProvider,
    );
    if (!now || now.status === "requires_action") throw domainErrors.paymentInFlightAtProvider(5);
    return now;
  }
}
