import { randomUUID } from "node:crypto";
import { isRequirementFailure } from "@idempotent-checkout/idempotency/sql";
import { describe, expect, it } from "vitest";
import { db } from "../db";
import { HOUSE_ACCOUNTS_MISSING, postRefundReversal } from "./index";

describe("a refund's reversal in a currency without house accounts", () => {
  it("fails with the coded requirement HOUSE_ACCOUNTS_MISSING, nothing written", async () => {
    const currency = "XTS"; // ISO 4217's code for testing: never a house currency here
    const refundId = randomUUID();
    const failure = await db()
      .$transaction((tx) =>
        postRefundReversal(tx, {
          refundId,
          paymentId: randomUUID(),
          amountMinor: 100,
          currency,
          description: "no house accounts",
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeDefined();
    expect(isRequirementFailure(failure, HOUSE_ACCOUNTS_MISSING)).toBe(true);
    expect(await db().ledgerTransaction.count({ where: { refundId } })).toBe(0);
  });
});
