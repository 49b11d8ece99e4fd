import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import Stripe from "stripe";

/**
 * The provider's webhook on the production build (`next build` + `next start`): refusals are 4xx
 * problems with nothing recorded, a signed event is recorded once. The secret is the one
 * playwright.config.ts gives the server.
 */
const SECRET = "whsec_e2e_only_0123456789abcdef";
const post = (request: import("@playwright/test").APIRequestContext, body: string, signature?: string) =>
  request.post("/api/webhooks/stripe", {
    data: body,
    headers: { "content-type": "application/json", ...(signature && { "stripe-signature": signature }) },
  });
const sign = (body: string, secret = SECRET) =>
  Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
const event = () =>
  JSON.stringify({
    id: `evt_e2e_${randomUUID()}`,
    type: "payment_intent.succeeded",
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: "pi_e2e",
        object: "payment_intent",
        status: "succeeded",
        metadata: { payment_id: randomUUID() },
      },
    },
  });

test("a missing or wrong signature is a 400 problem, and a signed body that is not an event too", async ({
  request,
}) => {
  const body = event();
  for (const signature of [undefined, sign(body, "whsec_not_ours_0123456789")]) {
    const answer = await post(request, body, signature);
    expect(answer.status()).toBe(400);
    expect(answer.headers()["content-type"]).toContain("application/problem+json");
    expect((await answer.json()).type).toBe("/docs/problems#webhook-signature-invalid");
  }
  const notAnEvent = JSON.stringify({ hello: "world" });
  const answer = await post(request, notAnEvent, sign(notAnEvent));
  expect([answer.status(), (await answer.json()).type]).toEqual([400, "/docs/problems#invalid-request"]);
});

test("a signed event is recorded once: the same event again is a duplicate", async ({ request }) => {
  const body = event();
  const first = await post(request, body, sign(body));
  expect(first.status(), await first.text()).toBe(200);
  expect(await first.json()).toMatchObject({ received: true, outcome: "unknown_object", duplicate: false });
  const again = await post(request, body, sign(body));
  expect(await again.json()).toMatchObject({ outcome: "unknown_object", duplicate: true });
});
