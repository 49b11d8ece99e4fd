import { afterAll, beforeAll, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { closedPort } from "../test/network";
import { startTestProvider } from "../test/payments";
import { bookings, paymentWithLostAnswer, providerEvent } from "../test/provider-events";
import { catchUpProviderEvents } from "./catch-up";

/**
 * A provider whose webhook endpoint is down: every delivery fails, so its events stay undelivered
 * (`delivery_success=false`), which is what the catch-up reads back.
 */
let provider: Awaited<ReturnType<typeof startTestProvider>>;
let account: TestAccount;
beforeAll(async () => {
  provider = await startTestProvider({
    PROVIDER_WEBHOOK_URL: `http://127.0.0.1:${await closedPort()}/api/webhooks/stripe`,
    PROVIDER_WEBHOOK_SECRET: "whsec_endpoint_down_0123456789",
  });
  account = await createTestAccount("catch_up");
});
afterAll(() => provider?.stop());

it("applies an undelivered event from the provider's events list, once", async () => {
  const pending = await paymentWithLostAnswer(account, provider.client);
  const event = await providerEvent(provider.client, pending.id, "payment_intent.succeeded");
  const deps = { prisma: db(), provider: provider.client };
  expect(await catchUpProviderEvents(deps, { lookbackSeconds: 300 })).toBeGreaterThan(0);
  expect((await db().payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("succeeded");
  expect(await db().providerEvent.findUnique({ where: { id: event.id } })).toMatchObject({
    via: "catch_up",
    outcome: "applied",
  });
  expect(await bookings(pending.id)).toBe(1);
  // The next pass finds it recorded: nothing applied again.
  await catchUpProviderEvents(deps, { lookbackSeconds: 300 });
  expect(await bookings(pending.id)).toBe(1);
});

it("leaves delivered events to their webhook: this payment's events are not listed", async () => {
  const healthy = await startTestProvider();
  try {
    const pending = await paymentWithLostAnswer(account, healthy.client);
    const event = await providerEvent(healthy.client, pending.id, "payment_intent.succeeded");
    // (Other files' undelivered events share the provider's store: only this payment's are asserted.)
    await catchUpProviderEvents({ prisma: db(), provider: healthy.client }, { lookbackSeconds: 300 });
    expect(await db().providerEvent.findUnique({ where: { id: event.id } })).toBeNull();
    expect((await db().payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("pending");
  } finally {
    await healthy.stop();
  }
});
