import Stripe from "stripe";
import { beforeAll, describe, expect } from "vitest";
import { db } from "../db";
import { handleProviderWebhook } from "../http/provider-webhook";
import { payment } from "../payments/operation";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import { bookings, paymentWithLostAnswer, providerEvent } from "../test/provider-events";
import { it, type TestProvider } from "../test/vitest";

const SECRET = "whsec_test_current_0123456789";
const OLD_SECRET = "whsec_test_previous_0123456789";

let provider: TestProvider;
let alice: TestAccount;
beforeAll(async () => {
  alice = await createTestAccount("webhooks");
});
it.beforeAll(({ provider: running }) => {
  provider = running;
});

function deliver(body: string, signature: string | null, secrets = [SECRET]) {
  const headers = new Headers({ "content-type": "application/json" });
  if (signature !== null) headers.set("stripe-signature", signature);
  return handleProviderWebhook(
    new Request("http://checkout.test/api/webhooks/stripe", { method: "POST", headers, body }),
    {
      prisma: db,
      provider: () => provider.client,
      secrets,
    },
  );
}
const signed = (body: string, secret = SECRET, timestamp?: number) =>
  Stripe.webhooks.generateTestHeaderString({ payload: body, secret, ...(timestamp && { timestamp }) });

const recorded = (id: string) => db().providerEvent.findUnique({ where: { id } });

describe("POST /api/webhooks/stripe", () => {
  it("finishes a payment whose answer was lost, once; the same event again changes nothing", async () => {
    const pending = await paymentWithLostAnswer(alice, provider.client);
    const event = await providerEvent(provider.client, pending.id, "payment_intent.succeeded");
    const body = JSON.stringify(event);

    const first = await deliver(body, signed(body));
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ received: true, outcome: "applied", duplicate: false });
    const settled = await db().payment.findUniqueOrThrow({ where: { id: pending.id } });
    expect([settled.status, settled.providerChargeId]).toEqual([
      "succeeded",
      event.data.object && (event.data.object as { id: string }).id,
    ]);
    expect(await bookings(pending.id)).toBe(1);
    expect((await recorded(event.id))?.outcome).toBe("applied");

    const again = await deliver(body, signed(body));
    expect(await again.json()).toMatchObject({ outcome: "applied", duplicate: true });
    expect(await bookings(pending.id)).toBe(1);
  });

  it("late, after the completer finished the payment: recorded as already settled, nothing booked twice", async () => {
    const pending = await paymentWithLostAnswer(alice, provider.client);
    const key = pending.idempotencyKeyId as bigint;
    expect(await payment.redrive({ prisma: db(), provider: provider.client }, key, { by: "test" })).toBe(
      "settled",
    );
    const event = await providerEvent(provider.client, pending.id, "payment_intent.succeeded");
    const body = JSON.stringify(event);
    const late = await deliver(body, signed(body));
    expect(await late.json()).toMatchObject({ outcome: "already_settled", duplicate: false });
    expect(await bookings(pending.id)).toBe(1);
  });

  it("an older event out of order moves nothing back: the provider's object decides", async () => {
    const pending = await paymentWithLostAnswer(alice, provider.client);
    const event = await providerEvent(provider.client, pending.id, "payment_intent.succeeded");
    const body = JSON.stringify(event);
    await deliver(body, signed(body));
    // The same intent's earlier failure, delivered after its success (a card retried, say).
    const older = {
      ...event,
      id: `${event.id}_older`,
      type: "payment_intent.payment_failed",
      created: event.created - 60,
    };
    const olderBody = JSON.stringify(older);
    const answer = await deliver(olderBody, signed(olderBody));
    expect(await answer.json()).toMatchObject({ outcome: "already_settled" });
    expect((await db().payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("succeeded");
  });

  it("an event for an object we never made is recorded and visible, and changes nothing", async () => {
    const body = JSON.stringify({
      id: `evt_unknown_${newKey()}`,
      type: "payment_intent.succeeded",
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: "pi_not_ours",
          object: "payment_intent",
          status: "succeeded",
          metadata: { payment_id: crypto.randomUUID() },
        },
      },
    });
    const answer = await deliver(body, signed(body));
    expect(answer.status).toBe(200);
    const { id } = JSON.parse(body) as { id: string };
    expect(await answer.json()).toMatchObject({ outcome: "unknown_object" });
    expect((await recorded(id))?.outcome).toBe("unknown_object");
  });

  it("refuses a missing or wrong signature, a stale timestamp and a body that is not an event (400), recording nothing", async () => {
    const body = JSON.stringify({
      id: `evt_bad_${newKey()}`,
      type: "payment_intent.succeeded",
      created: 1,
      data: { object: { id: "pi_x", object: "payment_intent" } },
    });
    const { id } = JSON.parse(body) as { id: string };
    const stale = signed(body, SECRET, Math.floor(Date.now() / 1000) - 301);
    for (const signature of [null, signed(body, "whsec_someone_elses_secret"), stale, signed(`${body} `)]) {
      const answer = await deliver(body, signature);
      expect(answer.status).toBe(400);
      expect((await answer.json()).type).toBe("/docs/problems#webhook-signature-invalid");
    }
    const notAnEvent = JSON.stringify({ hello: "world" });
    const answer = await deliver(notAnEvent, signed(notAnEvent));
    expect(answer.status).toBe(400);
    expect((await answer.json()).type).toBe("/docs/problems#invalid-request");
    expect(await recorded(id)).toBeNull();
  });

  it("during a rotation both secrets sign: an event signed with the old one is accepted", async () => {
    const body = JSON.stringify({
      id: `evt_rotated_${newKey()}`,
      type: "payment_intent.created",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: "pi_rotated", object: "payment_intent", metadata: {} } },
    });
    const answer = await deliver(body, signed(body, OLD_SECRET), [SECRET, OLD_SECRET]);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ outcome: "ignored" });
    expect((await deliver(body, signed(body, OLD_SECRET), [SECRET])).status).toBe(400);
  });
});
