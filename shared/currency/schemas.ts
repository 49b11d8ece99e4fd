import { z } from "zod";
import { type AmountUse, amountProblem, isCurrencyCode } from "./amounts";

/** An ISO 4217 code of a currency Stripe supports, upper case ("EUR", "JPY"). */
export const ZCurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, "must be an upper-case ISO 4217 code")
  .refine(isCurrencyCode, "is not a supported currency")
  .meta({
    description: "ISO 4217 code of a currency Stripe supports (decision 0175).",
    examples: ["EUR", "JPY"],
  });

/**
 * The currency of an amount read back (an answer's field): the shape only. Amounts are checked
 * against the table where they enter; a row older than the table still reads, never a 500.
 */
export const ZCurrencyOfAmount = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: "ISO 4217 code of the amount's currency (decision 0175).", examples: ["EUR", "JPY"] });

/** An amount of minor units valid in its currency for `use` (steps, maximum, and a charge's minimum). */
export function zMoney(use: AmountUse = "charge") {
  return z
    .object({ amountMinor: z.number().int(), currency: ZCurrencyCode })
    .superRefine(({ amountMinor, currency }, ctx) => {
      const problem = isCurrencyCode(currency) ? amountProblem(amountMinor, currency, use) : null;
      if (problem)
        ctx.addIssue({
          code: "custom",
          path: ["amountMinor"],
          message: problem.message,
          params: { reason: problem.code },
        });
    });
}
