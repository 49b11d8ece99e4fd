import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../../scripts/lib/provider-process";
import { type PaymentProvider, stripeProvider } from ".";
import { closedPort, collect, failure, key, press, visa } from "./test-support";

let simulator: ProviderProcess;
let provider: PaymentProvider;

beforeAll(async () => {
  const databaseUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || "";
  simulator = await startProvider({ databaseUrl });
  provider = stripeProvider({ baseUrl: simulator.url, secretKey: "sk_test_adapter" });
}, 20_000);

afterAll(async () => {
  await simulator?.stop();
});

describe("3-D Secure: createCharge with a returnUrl", () => {
  const returnUrl = "https://shop.example/checkout/return?order=o-1";

  it("answers requires_action with the challenge page's URL; completing it there makes the payment succeed", async () => {
    const k = key("3ds-complete");
    const input = { ...visa, paymentMethod: "pm_card_threeDSecure2Required", returnUrl };
    const waiting = await provider.createCharge(input, k);
    expect(waiting).toMatchObject({ status: "requires_action", amountReceived: 0, failureCode: null });
    expect(waiting.nextActionUrl).toMatch(new RegExp(`^${simulator.url}/3d_secure/[\\w-]{32}$`));
    expect(await provider.createCharge(input, k)).toEqual(waiting);
    const back = await press(waiting.nextActionUrl ?? "", "complete");
    expect(back.searchParams.get("redirect_status")).toBe("succeeded");
    expect(back.searchParams.get("payment_intent")).toBe(waiting.id);
    expect(await provider.getCharge(waiting.id)).toMatchObject({
      status: "succeeded",
      amountReceived: 1999,
      nextActionUrl: null,
    });
  });

  it("manual capture through a challenge: authorized once completed", async () => {
    const waiting = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_authenticationRequired", returnUrl, captureMethod: "manual" },
      key("3ds-manual"),
    );
    await press(waiting.nextActionUrl ?? "", "complete");
    expect(await provider.getCharge(waiting.id)).toMatchObject({
      status: "authorized",
      amountCapturable: 1999,
    });
  });

  it("a failed authentication reads as declined, failureCode payment_intent_authentication_failure", async () => {
    const waiting = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_authenticationRequired", returnUrl },
      key("3ds-fail"),
    );
    const back = await press(waiting.nextActionUrl ?? "", "fail");
    expect(back.searchParams.get("redirect_status")).toBe("failed");
    expect(await provider.getCharge(waiting.id)).toMatchObject({
      status: "declined",
      failureCode: "payment_intent_authentication_failure",
      paymentMethod: "pm_card_authenticationRequired",
    });
  });

  it("a payment waiting for its customer can be canceled (abandoned)", async () => {
    const waiting = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_authenticationRequired", returnUrl },
      key("3ds-abandon"),
    );
    const canceled = await provider.cancelCharge(waiting.id, { reason: "abandoned" }, key("cancel"));
    expect(canceled).toMatchObject({
      status: "canceled",
      cancellationReason: "abandoned",
      nextActionUrl: null,
    });
  });
});

describe("captureCharge and cancelCharge: keyed POSTs on the payment", () => {
  it("a partial capture: succeeded with the amount received, the rest released; the same key replays", async () => {
    const held = await provider.createCharge({ ...visa, captureMethod: "manual" }, key("held"));
    const k = key("capture");
    const captured = await provider.captureCharge(
      held.id,
      { amount: 1500, metadata: { capture_id: "c-1" } },
      k,
    );
    expect(captured).toMatchObject({
      id: held.id,
      status: "succeeded",
      amountReceived: 1500,
      amountCapturable: 0,
      metadata: { capture_id: "c-1" },
    });
    expect(
      await provider.captureCharge(held.id, { amount: 1500, metadata: { capture_id: "c-1" } }, k),
    ).toEqual(captured);
    // The payment's own key stays where the adapter finds it.
    expect(
      (await collect(provider.listCharges({ metadata: { capture_id: "c-1" } }))).map((c) => c.id),
    ).toContain(held.id);
  });

  it("definite refusals: rejected with Stripe's code (another capture, more than held, a capture after a cancel)", async () => {
    const held = await provider.createCharge({ ...visa, captureMethod: "manual" }, key("held"));
    const tooMuch = await failure(provider.captureCharge(held.id, { amount: 2000 }, key("too-much")));
    expect(tooMuch).toMatchObject({
      kind: "rejected",
      retryable: false,
      status: 400,
      code: "amount_too_large",
    });
    await provider.captureCharge(held.id, {}, key("all"));
    const again = await failure(provider.captureCharge(held.id, {}, key("again")));
    expect(again).toMatchObject({ kind: "rejected", status: 400, code: "payment_intent_unexpected_state" });
    const cancelPaid = await failure(provider.cancelCharge(held.id, {}, key("cancel-paid")));
    expect(cancelPaid).toMatchObject({ kind: "rejected", code: "payment_intent_unexpected_state" });

    const other = await provider.createCharge({ ...visa, captureMethod: "manual" }, key("held"));
    const k = key("void");
    const canceled = await provider.cancelCharge(other.id, { reason: "requested_by_customer" }, k);
    expect(canceled).toMatchObject({
      status: "canceled",
      amountCapturable: 0,
      amountReceived: 0,
      cancellationReason: "requested_by_customer",
    });
    expect(await provider.cancelCharge(other.id, { reason: "requested_by_customer" }, k)).toEqual(canceled);
    const late = await failure(provider.captureCharge(other.id, {}, key("late")));
    expect(late).toMatchObject({ kind: "rejected", code: "payment_intent_unexpected_state" });
    const missing = await failure(provider.captureCharge("pi_000000000000000000000000", {}, key("missing")));
    expect(missing).toMatchObject({ kind: "rejected", status: 404, code: "resource_missing" });
  });

  it("a dropped capture may have left; its key then replays the capture", async () => {
    const held = await provider.createCharge({ ...visa, captureMethod: "manual" }, key("held"));
    const k = key("drop-capture");
    const err = await failure(provider.captureCharge(held.id, { amount: 1000 }, k, { fault: "drop" }));
    expect(err).toMatchObject({ kind: "unavailable", requestMayHaveLeft: true });
    expect(await provider.captureCharge(held.id, { amount: 1000 }, k)).toMatchObject({
      status: "succeeded",
      amountReceived: 1000,
    });
    const e503 = await failure(provider.cancelCharge(held.id, {}, key("503"), { fault: "error=503" }));
    expect(e503).toMatchObject({ kind: "unavailable", status: 503, retryAfterMs: 1000 });
  });

  it("a refused connection: never left, for capture and cancel alike", async () => {
    const down = stripeProvider({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      secretKey: "sk_test_adapter",
    });
    expect(await failure(down.captureCharge("pi_1", {}, key("c")))).toMatchObject({
      kind: "unavailable",
      requestMayHaveLeft: false,
    });
    expect(await failure(down.cancelCharge("pi_1", {}, key("v")))).toMatchObject({
      kind: "unavailable",
      requestMayHaveLeft: false,
    });
  });
});
