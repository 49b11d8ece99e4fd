import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, sdk, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;
const db = openDb();
const returnUrl = "https://shop.example/checkout/return?order=o_1#top";

beforeAll(async () => {
  provider = await startProvider({
    databaseUrl: databaseUrl(),
    env: { PROVIDER_MERCHANT_NAME: "Towel & Co" },
  });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

/** A PaymentIntent confirmed with a return_url and a 3-D Secure card; the challenge page's URL. */
async function challenged(params: Partial<Stripe.PaymentIntentCreateParams> = {}) {
  const pi = await stripe.paymentIntents.create({
    ...visa,
    payment_method: "pm_card_authenticationRequired",
    return_url: returnUrl,
    ...params,
  });
  const url = pi.next_action?.redirect_to_url?.url ?? "";
  return { pi, url };
}

/** A button pressed on the page, as a browser posts the form (no API key). */
async function press(url: string, action: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ action }),
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

const backTo = (pi: Stripe.PaymentIntent, status: "succeeded" | "failed") =>
  `https://shop.example/checkout/return?order=o_1&payment_intent=${pi.id}&payment_intent_client_secret=${pi.client_secret}&redirect_status=${status}#top`;

describe("the challenge page (next_action.redirect_to_url.url)", () => {
  it("is served outside /v1 with no API key: the merchant, the amount and two buttons", async () => {
    const { pi, url } = await challenged();
    expect(pi).toMatchObject({
      status: "requires_action",
      next_action: { type: "redirect_to_url", redirect_to_url: { return_url: returnUrl } },
    });
    expect(url).toMatch(new RegExp(`^${provider.url}/3d_secure/[\\w-]{32}$`));
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const page = await res.text();
    expect(page).toContain("<h1>3D Secure test payment</h1>");
    expect(page).toContain("Towel &amp; Co");
    expect(page).toContain("19.99 USD");
    expect(page).toContain(
      '<button type="submit" name="action" value="complete">Complete authentication</button>',
    );
    expect(page).toContain('<button type="submit" name="action" value="fail">Fail authentication</button>');
  });

  it("an unknown token is 404; another action is 400 and changes nothing", async () => {
    const unknown = await fetch(`${provider.url}/3d_secure/${"x".repeat(32)}`);
    expect(unknown.status).toBe(404);
    const { pi, url } = await challenged();
    expect((await press(url, "maybe")).status).toBe(400);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("requires_action");
  });
});

describe("completing it", () => {
  it("moves the intent to succeeded with its charge and events, and sends the browser back as Stripe does", async () => {
    const { pi, url } = await challenged();
    const done = await press(url, "complete");
    expect(done.status).toBe(303);
    expect(done.location).toBe(backTo(pi, "succeeded"));
    const after = await stripe.paymentIntents.retrieve(pi.id);
    expect(after).toMatchObject({ status: "succeeded", amount_received: 1999, next_action: null });
    expect(after.latest_charge).toMatch(/^ch_/);
    expect(await db.eventTypes(pi.id)).toEqual([
      "payment_intent.created",
      "payment_intent.requires_action",
      "payment_intent.succeeded",
    ]);
    expect(await db.eventTypes(after.latest_charge as string)).toEqual(["charge.succeeded"]);
    const listed = await stripe.events.list({ type: "payment_intent.succeeded", limit: 100 });
    const event = listed.data.find((e) => (e.data.object as { id: string }).id === pi.id);
    // The customer's doing, not an API request's.
    expect(event?.request).toEqual({ id: null, idempotency_key: null });
  });

  it("with capture_method manual: requires_capture (amount_capturable_updated), then capturable", async () => {
    const { pi, url } = await challenged({ capture_method: "manual" });
    expect((await press(url, "complete")).status).toBe(303);
    const held = await stripe.paymentIntents.retrieve(pi.id);
    expect(held).toMatchObject({ status: "requires_capture", amount_capturable: 1999, amount_received: 0 });
    expect(await db.eventTypes(pi.id)).toContain("payment_intent.amount_capturable_updated");
    expect((await stripe.paymentIntents.capture(pi.id, { amount_to_capture: 500 })).amount_received).toBe(
      500,
    );
  });

  it("a card declined after authentication: requires_payment_method with the decline, redirect_status failed", async () => {
    const { pi, url } = await challenged({ payment_method: "pm_card_threeDSecureRequiredChargeDeclined" });
    expect((await press(url, "complete")).location).toBe(backTo(pi, "failed"));
    const after = await stripe.paymentIntents.retrieve(pi.id);
    expect(after).toMatchObject({
      status: "requires_payment_method",
      last_payment_error: { type: "card_error", code: "card_declined", decline_code: "generic_decline" },
    });
    expect(await db.chargesOf(pi.id)).toEqual({ all: 1, succeeded: 0 });
  });

  it("exactly once: twenty presses at the same moment move the intent once; the others see it over", async () => {
    const { pi, url } = await challenged();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => press(url, i % 2 === 0 ? "complete" : "fail")),
    );
    expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    const events = await db.eventTypes(pi.id);
    expect(
      events.filter((t) => t !== "payment_intent.created" && t !== "payment_intent.requires_action"),
    ).toHaveLength(1);
    expect((await db.chargesOf(pi.id)).all).toBeLessThanOrEqual(1);
  });
});

describe("failing it", () => {
  it("requires_payment_method with payment_intent_authentication_failure, payment_intent.payment_failed, no charge", async () => {
    const { pi, url } = await challenged();
    const done = await press(url, "fail");
    expect(done).toMatchObject({ status: 303, location: backTo(pi, "failed") });
    const after = await stripe.paymentIntents.retrieve(pi.id);
    expect(after).toMatchObject({
      status: "requires_payment_method",
      payment_method: null,
      latest_charge: null,
      next_action: null,
      last_payment_error: {
        type: "invalid_request_error",
        code: "payment_intent_authentication_failure",
        payment_method: { id: "pm_card_authenticationRequired" },
      },
    });
    expect(after.last_payment_error?.message).toMatch(/failed authentication/);
    expect(await db.eventTypes(pi.id)).toEqual([
      "payment_intent.created",
      "payment_intent.requires_action",
      "payment_intent.payment_failed",
    ]);
    expect(await db.chargesOf(pi.id)).toEqual({ all: 0, succeeded: 0 });
    // The same intent may be paid with another card.
    expect((await stripe.paymentIntents.confirm(pi.id, { payment_method: "pm_card_visa" })).status).toBe(
      "succeeded",
    );
  });
});

describe("once over, nothing changes (the page says so and still links back)", () => {
  it("a second press and a reload, after completing", async () => {
    const { pi, url } = await challenged();
    await press(url, "complete");
    const events = await db.eventTypes(pi.id);
    for (const again of [await press(url, "fail"), await press(url, "complete")]) {
      expect(again.status).toBe(200);
      expect(again.text).toContain("This authentication is over: it was completed.");
      expect(again.text).toContain(backTo(pi, "succeeded").replaceAll("&", "&amp;"));
    }
    const reload = await (await fetch(url)).text();
    expect(reload).not.toContain("<button");
    expect(reload).toContain(backTo(pi, "succeeded").replaceAll("&", "&amp;"));
    expect(await db.eventTypes(pi.id)).toEqual(events);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("succeeded");
  });

  it("after the intent was canceled (an abandoned challenge)", async () => {
    const { pi, url } = await challenged();
    const canceled = await stripe.paymentIntents.cancel(pi.id, { cancellation_reason: "abandoned" });
    expect(canceled).toMatchObject({
      status: "canceled",
      next_action: null,
      cancellation_reason: "abandoned",
    });
    const late = await press(url, "complete");
    expect(late.status).toBe(200);
    expect(late.text).toContain("the payment was canceled");
    expect(late.text).toContain(backTo(pi, "failed").replaceAll("&", "&amp;"));
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("canceled");
    expect(await db.chargesOf(pi.id)).toEqual({ all: 0, succeeded: 0 });
  });

  it("after the intent was confirmed again: a new challenge, the old page is over", async () => {
    const { pi, url } = await challenged();
    const again = await stripe.paymentIntents.confirm(pi.id, { return_url: returnUrl });
    const newUrl = again.next_action?.redirect_to_url?.url ?? "";
    expect(newUrl).not.toBe(url);
    expect((await press(url, "complete")).status).toBe(200);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("requires_action");
    expect((await press(newUrl, "complete")).status).toBe(303);
  });
});

describe("faults and restarts", () => {
  it("X-Provider-Fault applies: error=503 changes nothing; drop commits and answers nothing", async () => {
    const { pi, url } = await challenged();
    const refused = await press(url, "complete", { "x-provider-fault": "error=503" });
    expect(refused.status).toBe(503);
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("requires_action");
    await expect(press(url, "complete", { "x-provider-fault": "drop" })).rejects.toThrow();
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("succeeded");
    expect(await (await fetch(url)).text()).toContain("it was completed");
  });

  it("the challenge is kept in the simulator's store: another process completes it", async () => {
    const { pi, url } = await challenged();
    const other = await startProvider({ databaseUrl: databaseUrl() });
    try {
      const there = url.replace(provider.url, other.url);
      expect((await press(there, "complete")).location).toBe(backTo(pi, "succeeded"));
    } finally {
      await other.stop();
    }
  }, 20_000);
});

describe("parameters", () => {
  it("a return_url beside allow_redirects never is refused; so is one that is no URL", async () => {
    const never = await failureOf(
      stripe.paymentIntents.create({
        ...visa,
        return_url: returnUrl,
        automatic_payment_methods: { enabled: true, allow_redirects: "never" },
      }),
    );
    expect(never).toMatchObject({ statusCode: 400, code: "parameter_invalid", param: "return_url" });
    const notUrl = await failureOf(stripe.paymentIntents.create({ ...visa, return_url: "not a url" }));
    expect(notUrl).toMatchObject({ statusCode: 400, code: "url_invalid", param: "return_url" });
  });

  it.each([
    "pm_card_authenticationRequiredOnSetup",
    "pm_card_authenticationRequiredSetupForOffSession",
    "pm_card_threeDSecure2Required",
    "pm_card_threeDSecureRequired",
  ])("%s asks for 3-D Secure, then succeeds", async (pm) => {
    const { pi, url } = await challenged({ payment_method: pm });
    expect(pi.status).toBe("requires_action");
    expect((await press(url, "complete")).location).toBe(backTo(pi, "succeeded"));
  });

  it("pm_card_threeDSecureOptional and pm_card_amex_threeDSecureNotSupported succeed at once", async () => {
    for (const pm of ["pm_card_threeDSecureOptional", "pm_card_amex_threeDSecureNotSupported"]) {
      const pi = await stripe.paymentIntents.create({ ...visa, payment_method: pm, return_url: returnUrl });
      expect(pi.status, pm).toBe("succeeded");
    }
  });
});
