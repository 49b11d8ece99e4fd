import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../../scripts/lib/provider-process";
import { type PaymentProvider, ProviderError, stripeProvider } from ".";
import { closedPort, collect, failure, key, visa } from "./test-support";

let simulator: ProviderProcess;
let provider: PaymentProvider;

beforeAll(async () => {
  const databaseUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || "";
  simulator = await startProvider({ databaseUrl, env: { PROVIDER_SLOW_CARD_MS: "1500" } });
  provider = stripeProvider({ baseUrl: simulator.url, secretKey: "sk_test_adapter" });
}, 20_000);

afterAll(async () => {
  await simulator?.stop();
});

describe("createCharge: paymentIntents.create with confirm, our key as its idempotencyKey", () => {
  it("a good card: a succeeded Charge with a pi_ id; the same key replays it", async () => {
    const k = key("visa");
    const charge = await provider.createCharge({ ...visa, metadata: { payment_id: "p-1" } }, k);
    expect(charge).toMatchObject({
      amount: 1999,
      currency: "eur",
      paymentMethod: "pm_card_visa",
      status: "succeeded",
      failureCode: null,
      failureMessage: null,
      metadata: { payment_id: "p-1" },
    });
    expect(charge.id).toMatch(/^pi_/);
    expect(Date.parse(charge.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(await provider.createCharge({ ...visa, metadata: { payment_id: "p-1" } }, k)).toEqual(charge);
    expect(await provider.getCharge(charge.id)).toEqual(charge);
  });

  it("a decline is an outcome: status declined, failureCode the decline code, else the code", async () => {
    const insufficient = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_chargeDeclinedInsufficientFunds" },
      key("nsf"),
    );
    expect(insufficient).toMatchObject({
      status: "declined",
      failureCode: "insufficient_funds",
      failureMessage: "Your card has insufficient funds.",
      paymentMethod: "pm_card_chargeDeclinedInsufficientFunds",
    });
    const generic = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_declined" },
      key("generic"),
    );
    expect(generic).toMatchObject({ status: "declined", failureCode: "generic_decline" });
    const expired = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_chargeDeclinedExpiredCard" },
      key("expired"),
    );
    expect(expired.failureCode).toBe("expired_card");
    expect(await provider.getCharge(expired.id)).toEqual(expired);
  });

  it("a card that asks for authentication, with no returnUrl: pending (nowhere to send the customer); it reads as requires_action", async () => {
    const k = key("3ds");
    const err = await failure(
      provider.createCharge({ ...visa, paymentMethod: "pm_card_authenticationRequired" }, k),
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: "pending", retryable: true, code: "requires_action" });
    const [waiting] = await collect(provider.listCharges({ idempotencyKey: k }));
    expect(waiting).toMatchObject({ status: "requires_action", failureCode: null, nextActionUrl: null });
    expect(await provider.getCharge(waiting?.id ?? "")).toEqual(waiting);
  });

  it("captureMethod manual: authorized, the amount capturable, nothing received; the same key replays", async () => {
    const k = key("manual");
    const held = await provider.createCharge({ ...visa, captureMethod: "manual" }, k);
    expect(held).toMatchObject({
      status: "authorized",
      amountCapturable: 1999,
      amountReceived: 0,
      nextActionUrl: null,
      cancellationReason: null,
    });
    expect(await provider.createCharge({ ...visa, captureMethod: "manual" }, k)).toEqual(held);
    const paid = await provider.createCharge({ ...visa, captureMethod: "automatic" }, key("auto"));
    expect(paid).toMatchObject({ status: "succeeded", amountCapturable: 0, amountReceived: 1999 });
  });
});

describe("errors, by the SDK's type, status and code", () => {
  it("an unknown payment method: rejected, code resource_missing on param payment_method", async () => {
    const err = await failure(
      provider.createCharge({ ...visa, paymentMethod: "pm_card_nonsense" }, key("unknown-pm")),
    );
    expect(err).toMatchObject({
      kind: "rejected",
      retryable: false,
      status: 400,
      code: "resource_missing",
      param: "payment_method",
    });
  });

  it("invalid parameters: rejected with Stripe's parameter codes", async () => {
    const err = await failure(provider.createCharge({ ...visa, amount: 0 }, key("zero")));
    expect(err).toMatchObject({ kind: "rejected", status: 400, code: "amount_too_small", param: "amount" });
  });

  it("the key reused with other parameters: rejected, code idempotency_error", async () => {
    const k = key("reuse");
    await provider.createCharge(visa, k);
    const err = await failure(provider.createCharge({ ...visa, amount: 2000 }, k));
    expect(err).toMatchObject({ kind: "rejected", status: 400, code: "idempotency_error" });
  });

  it("the key in use: conflict with Retry-After", async () => {
    const k = key("in-use");
    const slow = provider.createCharge({ ...visa, paymentMethod: "pm_card_slow" }, k);
    await new Promise((r) => setTimeout(r, 300));
    const err = await failure(provider.createCharge({ ...visa, paymentMethod: "pm_card_slow" }, k));
    expect(err).toMatchObject({
      kind: "conflict",
      status: 409,
      code: "idempotency_key_in_use",
      retryAfterMs: 1000,
    });
    expect((await slow).status).toBe("succeeded");
  });

  it("5xx: unavailable, the request may have left", async () => {
    const e500 = await failure(provider.createCharge(visa, key("500"), { fault: "error=500" }));
    expect(e500).toMatchObject({ kind: "unavailable", status: 500, requestMayHaveLeft: true });
    const e503 = await failure(provider.createCharge(visa, key("503"), { fault: "error=503" }));
    expect(e503).toMatchObject({ kind: "unavailable", status: 503, retryAfterMs: 1000 });
  });

  it("a dropped connection after the commit: unavailable, may have left; the same key then returns that payment", async () => {
    const k = key("drop");
    const err = await failure(provider.createCharge(visa, k, { fault: "drop" }));
    expect(err).toMatchObject({ kind: "unavailable", requestMayHaveLeft: true });
    const charges = await collect(provider.listCharges({ idempotencyKey: k }));
    expect(charges).toHaveLength(1);
    expect((await provider.createCharge(visa, k)).id).toBe(charges[0]?.id);
  });

  it("no answer within the timeout: timeout, may have left", async () => {
    const impatient = stripeProvider({
      baseUrl: simulator.url,
      secretKey: "sk_test_adapter",
      timeoutMs: 300,
    });
    const started = performance.now();
    const err = await failure(impatient.createCharge(visa, key("slow"), { fault: "latency=1500" }));
    expect(err).toMatchObject({ kind: "timeout", requestMayHaveLeft: true });
    expect(performance.now() - started).toBeLessThan(1400);
  });

  it("a refused connection: unavailable, and provably never left", async () => {
    const down = stripeProvider({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      secretKey: "sk_test_adapter",
    });
    const err = await failure(down.createCharge(visa, key("refused")));
    expect(err).toMatchObject({ kind: "unavailable", requestMayHaveLeft: false });
    expect(await failure(down.getCharge("pi_1"))).toMatchObject({ kind: "unavailable" });
  });

  it("a reset the SDK retried into a refused connection: still may have left (the first attempt got through)", async () => {
    // Accepts one connection and resets it, then stops listening: the SDK's own retry of the reset
    // is refused, and that last error alone would say the request never left.
    const server = createServer((socket) => {
      socket.once("data", () => {
        socket.resetAndDestroy();
        server.close();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const flaky = stripeProvider({ baseUrl: `http://127.0.0.1:${port}`, secretKey: "sk_test_adapter" });
    const err = await failure(flaky.createCharge(visa, key("reset-then-refused")));
    expect(err).toMatchObject({ kind: "unavailable", requestMayHaveLeft: true });
    expect(String((err.cause as { detail?: { code?: string } }).detail?.code)).toBe("ECONNREFUSED");
  });

  it("a wrong key: rejected 401", async () => {
    const wrong = stripeProvider({ baseUrl: simulator.url, secretKey: "sk_live_wrong" });
    expect(await failure(wrong.getCharge("pi_1"))).toMatchObject({ kind: "rejected", status: 401 });
  });
});

describe("reads", () => {
  it("getCharge: null for an unknown id", async () => {
    expect(await provider.getCharge("pi_000000000000000000000000")).toBeNull();
  });

  it("listCharges by key or metadata (a search), or by created (a list), oldest first", async () => {
    const since = new Date(Date.now() - 1000);
    const tag = key("tag");
    const made = [];
    for (let i = 0; i < 3; i++)
      made.push(await provider.createCharge({ ...visa, metadata: { tag } }, key(`l${i}`)));
    const byTag = await collect(provider.listCharges({ metadata: { tag } }));
    expect(byTag.map((c) => c.id)).toEqual(made.map((c) => c.id));
    const byKeyAndTag = await collect(provider.listCharges({ metadata: { tag }, createdGte: since }));
    expect(byKeyAndTag).toHaveLength(3);
    const small = stripeProvider({ baseUrl: simulator.url, secretKey: "sk_test_adapter", pageSize: 2 });
    const window = await collect(small.listCharges({ createdGte: since }));
    const ids = window.map((c) => c.id);
    for (const c of made) expect(ids).toContain(c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(window.map((c) => c.createdAt)).toEqual([...window.map((c) => c.createdAt)].sort());
  });
});

describe("refunds", () => {
  it("createRefund: a Refund of the pi_; a refusal is rejected with Stripe's code", async () => {
    const charge = await provider.createCharge({ ...visa, amount: 1000 }, key("paid"));
    const k = key("refund");
    const refund = await provider.createRefund(
      { charge: charge.id, amount: 400, metadata: { refund_id: "r-1" } },
      k,
    );
    expect(refund).toMatchObject({
      charge: charge.id,
      amount: 400,
      currency: "eur",
      status: "succeeded",
      metadata: { refund_id: "r-1" },
    });
    expect(refund.id).toMatch(/^re_/);
    expect(
      await provider.createRefund({ charge: charge.id, amount: 400, metadata: { refund_id: "r-1" } }, k),
    ).toEqual(refund);

    const tooMuch = await failure(provider.createRefund({ charge: charge.id, amount: 601 }, key("too-much")));
    expect(tooMuch).toMatchObject({ kind: "rejected", code: "amount_too_large", param: "amount" });
    await provider.createRefund({ charge: charge.id, amount: 600 }, key("rest"));
    const none = await failure(provider.createRefund({ charge: charge.id, amount: 1 }, key("none")));
    expect(none).toMatchObject({ kind: "rejected", code: "charge_already_refunded" });
    const declined = await provider.createCharge(
      { ...visa, paymentMethod: "pm_card_declined" },
      key("declined"),
    );
    const notRefundable = await failure(provider.createRefund({ charge: declined.id, amount: 1 }, key("nr")));
    expect(notRefundable).toMatchObject({ kind: "rejected", code: "charge_not_refundable" });
    const missing = await failure(
      provider.createRefund({ charge: "pi_000000000000000000000000", amount: 1 }, key("m")),
    );
    expect(missing).toMatchObject({ kind: "rejected", status: 404, code: "resource_missing" });
  });

  it("listRefunds by charge, by key and by metadata, oldest first", async () => {
    const charge = await provider.createCharge({ ...visa, amount: 1000 }, key("paid"));
    const k = key("r");
    const rb = key("rb");
    const a = await provider.createRefund(
      { charge: charge.id, amount: 100, metadata: { refund_id: key("ra") } },
      k,
    );
    const b = await provider.createRefund(
      { charge: charge.id, amount: 200, metadata: { refund_id: rb } },
      key("r"),
    );
    expect((await collect(provider.listRefunds({ charge: charge.id }))).map((r) => r.id)).toEqual([
      a.id,
      b.id,
    ]);
    expect((await collect(provider.listRefunds({ idempotencyKey: k }))).map((r) => r.id)).toEqual([a.id]);
    const byMeta = await collect(
      provider.listRefunds({ metadata: { refund_id: rb }, createdGte: new Date(Date.now() - 60_000) }),
    );
    expect(byMeta.map((r) => r.id)).toEqual([b.id]);
  });
});
