import { Webhook } from "standardwebhooks";
import { afterAll, expect } from "vitest";
import { db } from "../db";
import { startMessaging } from "../jobs";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { FAST_TRANSPORT } from "../test/messaging/fast";
import { envelopeOf, settledPayment } from "../test/messaging/payments";
import { waitFor } from "../test/messaging/queue";
import { it, type TestProvider } from "../test/vitest";
import { deliverDueMessages } from "./deliver";
import { registerEndpoint } from "./endpoints";
import { fanOutEvents } from "./fan-out";
import { startReceiver } from "./testing/receiver";

// A real payment through the outbox, the relay, the queue and the fan-out, to a receiver.
let release: () => Promise<void>;
let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  release = await takeMessagingTurn();
  provider = running;
  account = await createTestAccount("webhooks_e2e");
}, 180_000);
afterAll(async () => {
  await release?.();
});

it("a paid order and a declined one reach the merchant's endpoint once each, signed, as the API shows them", async () => {
  const receiver = await startReceiver();
  const endpoint = await registerEndpoint(
    db(),
    account.id,
    { url: receiver.url, events: ["payment.succeeded", "payment.failed"] },
    { requireHttps: false, allowLoopback: true },
  );
  const stop = startMessaging(db(), FAST_TRANSPORT);
  try {
    const paid = await settledPayment(account, provider.client);
    const declined = await settledPayment(account, provider.client, "pm_card_declined");
    await waitFor("both deliveries", async () => {
      await deliverDueMessages(db(), {
        policy: { requireHttps: false, allowLoopback: true },
        endpointIds: [endpoint.id],
      });
      return receiver.received.length >= 2;
    });
    const bodies = receiver.received.map(
      (r) =>
        new Webhook(endpoint.secret).verify(r.body, r.headers) as {
          type: string;
          data: { id: string; status: string; amount: number; updatedAt: string };
        },
    );
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]));
    expect(byType["payment.succeeded"]).toMatchObject({
      id: paid.payment.id,
      status: "succeeded",
      amount: paid.payment.amountMinor,
      providerChargeId: paid.payment.providerChargeId,
    });
    expect(byType["payment.failed"]).toMatchObject({ id: declined.payment.id, status: "declined" });

    // The queue delivering an event again (a crash before its ack) makes no second message.
    expect(await fanOutEvents(db(), [await envelopeOf(paid.messageId)])).toBe(0);
    expect(await db().webhookMessage.count({ where: { endpointId: endpoint.id } })).toBe(2);
  } finally {
    await stop();
    await receiver.stop();
  }
});
