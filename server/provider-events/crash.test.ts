import Stripe from "stripe";
import { afterAll, expect } from "vitest";
import { db } from "../db";
import type { ListedEvent } from "../provider";
import { createCaller } from "../root";
import { contextFor, createTestAccount } from "../test/fixtures";
import { callOutcome, createTestOrder, newKey } from "../test/payments";
import { startApiProcess } from "../test/processes";
import { it, type TestProvider } from "../test/vitest";

/**
 * A server SIGKILLed after the event's effect committed and before its 2xx left: the provider
 * never saw an answer, so it delivers the event again, to another instance. The payment is booked
 * once, and the second delivery finds the event recorded.
 */
const SECRET = "whsec_test_crash_0123456789";
let provider: TestProvider;
const survivors: Awaited<ReturnType<typeof startApiProcess>>[] = [];
it.beforeAll(({ provider: running }) => {
  provider = running;
});
afterAll(async () => {
  await Promise.all(survivors.map((s) => s.stop()));
});

async function lostEvent(paymentId: string): Promise<ListedEvent> {
  for await (const e of provider.client.listEvents({
    createdGte: new Date(Date.now() - 120_000),
    types: ["payment_intent.succeeded"],
  })) {
    if ((e.data.object as { metadata?: Record<string, string> }).metadata?.payment_id === paymentId) return e;
  }
  throw new Error(`no event for payment ${paymentId}`);
}

const post = (url: string, body: string) =>
  fetch(`${url}/api/webhooks/stripe`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }),
    },
    body,
  });

it("SIGKILL between the commit and the 2xx: the redelivery changes nothing", async () => {
  const account = await createTestAccount("webhook_crash");
  const order = await createTestOrder(account);
  const ctx = contextFor(
    account,
    { "idempotency-key": newKey(), "x-provider-fault": "drop" },
    provider.client,
  );
  await callOutcome(ctx.resHeaders, () =>
    createCaller(ctx).payments.create({ orderId: order.id, paymentMethod: "pm_card_visa" }),
  );
  const pending = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
  expect(pending.status).toBe("pending");
  const body = JSON.stringify(await lostEvent(pending.id));

  const env = { PAYMENT_PROVIDER_URL: provider.url, PAYMENT_PROVIDER_WEBHOOK_SECRETS: SECRET };
  const doomed = await startApiProcess({ ...env, CHECKOUT_FAILPOINTS: "after_webhook_applied" });
  await expect(post(doomed.url, body)).rejects.toThrow();
  expect(await doomed.exited).toBe("SIGKILL");
  expect((await db().payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("succeeded");

  const survivor = await startApiProcess(env);
  survivors.push(survivor);
  const again = await post(survivor.url, body);
  expect(again.status).toBe(200);
  expect(await again.json()).toMatchObject({ outcome: "applied", duplicate: true });
  expect(
    await db().ledgerTransaction.count({ where: { paymentId: pending.id, kind: "payment_capture" } }),
  ).toBe(1);
});
