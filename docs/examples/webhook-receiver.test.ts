import { once } from "node:events";
import { createServer } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { db } from "../../server/db";
import { createScratchDatabase, createTestAccount } from "../../server/test/fixtures";
import { waitFor } from "../../server/test/messaging/queue";
import {
  deliverDueMessages,
  fanOutEvents,
  registerEndpoint,
  replayMessage,
  rotateSecret,
} from "../../server/webhooks";
import { startWebhookReceiver } from "./webhook-receiver.mjs";

// The receiver of docs/examples as a merchant runs it (its own database), fed by our delivery:
// a message sent twice (a replay here, a lost 2xx in life) is applied once.
let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
beforeAll(async () => {
  scratch = await createScratchDatabase("receiver");
});
afterAll(() => scratch?.drop());

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  probe.close();
  return port;
}

const LOOPBACK = { requireHttps: false, allowLoopback: true };

it("verifies our signature, applies each message once however often it comes, and refuses a forged one", async () => {
  const account = await createTestAccount("receiver");
  const port = await freePort();
  const endpoint = await registerEndpoint(
    db(),
    account.id,
    { url: `http://127.0.0.1:${port}/webhooks`, events: ["payment.succeeded"] },
    LOOPBACK,
  );
  const rotated = await rotateSecret(db(), account.id, endpoint.id, 3600);
  // The merchant has switched to the new secret already: the overlap keeps deliveries verifying.
  const receiver = await startWebhookReceiver({ secrets: [rotated.secret], databaseUrl: scratch.url, port });
  try {
    const paymentId = crypto.randomUUID();
    const at = new Date().toISOString();
    await fanOutEvents(db(), [
      {
        messageId: `${paymentId}:payment.succeeded`,
        topic: "payment.succeeded",
        createdAt: at,
        payload: {
          paymentId,
          orderId: crypto.randomUUID(),
          accountId: account.id,
          amount: 900,
          currency: "EUR",
          occurredAt: at,
          providerChargeId: "ch_1",
          lines: [],
        },
      },
    ]);
    const deliverUntilAnswered = (answer: string) =>
      waitFor(`the answer ${answer}`, async () => {
        await deliverDueMessages(db(), { policy: LOOPBACK, endpointIds: [endpoint.id] });
        return (await lastExcerpt()) === answer;
      });
    const message = await db().webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    const lastExcerpt = async () =>
      (
        await db().webhookAttempt.findFirst({
          where: { messageId: message.id },
          orderBy: { attemptNumber: "desc" },
        })
      )?.responseExcerpt;

    await deliverUntilAnswered("applied");
    await replayMessage(db(), account.id, message.id);
    await deliverUntilAnswered("duplicate");

    const rows = await receiver.pool.query("SELECT webhook_id FROM received_webhooks");
    expect(rows.rows).toEqual([{ webhook_id: message.id }]);
    const state = await receiver.pool.query("SELECT payment_id, status FROM payment_states");
    expect(state.rows).toEqual([{ payment_id: paymentId, status: "succeeded" }]);

    // Signed with a secret that is not the merchant's: refused, and nothing recorded.
    const forger = new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`);
    const body = JSON.stringify({ type: "payment.succeeded", timestamp: at, data: {} });
    const now = new Date();
    const forged = await fetch(receiver.url, {
      method: "POST",
      headers: {
        "webhook-id": "msg_forged",
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": forger.sign("msg_forged", now, body),
      },
      body,
    });
    expect(forged.status).toBe(400);
    expect((await receiver.pool.query("SELECT count(*)::int AS n FROM received_webhooks")).rows[0].n).toBe(1);
  } finally {
    await receiver.stop();
  }
});
