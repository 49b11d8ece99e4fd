import { afterAll, expect } from "vitest";
import { db } from "../db";
import { startMessaging } from "../jobs";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { FAST_TRANSPORT } from "../test/messaging/fast";
import { settledPayment } from "../test/messaging/payments";
import { waitFor } from "../test/messaging/queue";
import { it, type TestProvider } from "../test/vitest";

// The relay and the consumer as the server and `npm run worker` start them (startBackgroundJobs).
let release: () => Promise<void>;
let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  release = await takeMessagingTurn();
  provider = running;
  account = await createTestAccount("jobs");
}, 180_000);
afterAll(async () => {
  await release?.();
});

it("the background jobs relay a payment's event and issue its receipt, with nothing else running", async () => {
  const stop = startMessaging(db(), FAST_TRANSPORT);
  try {
    const { order, messageId } = await settledPayment(account, provider.client);
    const receipt = await waitFor("the receipt", () =>
      db().receipt.findUnique({ where: { orderId: order.id } }),
    );
    expect(receipt.messageId).toBe(messageId);
    expect((await db().outboxMessage.findUniqueOrThrow({ where: { id: messageId } })).sentAt).not.toBeNull();
  } finally {
    await stop();
  }
});
