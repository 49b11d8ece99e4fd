import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../_keyed/memory-storage";
import { httpError } from "../_keyed/testing/trpc-errors";
import type { TPayment } from "./pay";
import { createPayer } from "./payer";

const ORDER = "0b9e8f0e-5a0c-4f43-9a51-3c1f7c0d2e12";
const RETURN = `https://shop.test/checkout?order=${ORDER}`;
const payment = (status: TPayment["status"]): TPayment => ({
  id: "p_1",
  orderId: ORDER,
  amount: 2599,
  currency: "EUR",
  status,
  providerChargeId: "pi_1",
  captureMethod: "automatic",
  amountCaptured: status === "succeeded" ? 2599 : 0,
  captureBefore: null,
  nextAction: status === "requires_action" ? { type: "redirect_to_url", url: "https://bank.test/3ds" } : null,
});

function harness(answers: (() => Promise<TPayment>)[], storage = new MemoryStorage()) {
  const sent: { key: string; returnUrl: string | undefined }[] = [];
  let n = 0;
  const make = () =>
    createPayer({
      storage: () => storage,
      async send(input, key) {
        sent.push({ key, returnUrl: input.returnUrl });
        const next = answers.shift();
        if (!next) throw new Error("no more answers");
        return next();
      },
      sleep: async () => {},
      now: Date.now,
      random: () => 0.5,
      intents: { newKey: () => `key-${++n}`, now: () => new Date() },
    });
  return { make, sent, storage };
}

describe("the 3-D Secure step in the checkout", () => {
  it("answers requires_action with the bank's URL and keeps the intent unanswered, returnUrl in it", async () => {
    const { make, sent, storage } = harness([async () => payment("requires_action")]);
    const outcome = await make().pay(ORDER, "pm_card_authenticationRequired", RETURN);
    expect(outcome).toMatchObject({ kind: "requires_action", url: "https://bank.test/3ds" });
    expect(sent).toEqual([{ key: "key-1", returnUrl: RETURN }]);
    const intent = JSON.parse(storage.getItem(`checkout:intent:${ORDER}`) ?? "null");
    expect(intent).toMatchObject({ key: "key-1", request: { returnUrl: RETURN } });
    expect(intent.answer).toBeUndefined();
  });

  it("back from the bank (a new page), the saved intent resumes with the same key and request", async () => {
    const storage = new MemoryStorage();
    const first = harness([async () => payment("requires_action")], storage);
    await first.make().pay(ORDER, "pm_card_authenticationRequired", RETURN);
    const back = harness([async () => payment("succeeded")], storage);
    const outcome = await back.make().resume(ORDER);
    expect(outcome).toMatchObject({ kind: "succeeded", payment: { status: "succeeded" } });
    expect(back.sent).toEqual([{ key: "key-1", returnUrl: RETURN }]);
  });

  it("a step not completed in time (402 payment_canceled) says nothing was charged", async () => {
    const { make } = harness([
      async () => {
        throw httpError(402, "PAYMENT_REQUIRED", {
          message: "The 3-D Secure step was not completed in time.",
          details: { reason: "payment_canceled", paymentId: "p_1" },
        });
      },
    ]);
    const outcome = await make().pay(ORDER, "pm_card_authenticationRequired", RETURN);
    expect(outcome).toMatchObject({ kind: "declined", paymentId: "p_1" });
  });
});
