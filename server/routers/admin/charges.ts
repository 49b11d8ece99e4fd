import type { Context } from "../../context";
import { type PaymentProvider, paymentProvider } from "../../provider";

/**
 * Charge look-ups that resolve the provider only when a payment has a charge, so a page of
 * keys without payments never needs one and a missing provider shows as "unavailable".
 */
export function chargeLookups(ctx: Context): Pick<PaymentProvider, "getCharge"> {
  return { getCharge: async (id) => (ctx.provider ?? paymentProvider()).getCharge(id) };
}
