import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { handleRestRequest } from "../http/rest-handler";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { waitFor } from "../test/messaging/queue";
import { deliverDueMessages } from "../webhooks";
import { startReceiver } from "../webhooks/testing/receiver";

let alice: TestAccount;
let bob: TestAccount;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  [alice, bob] = await Promise.all([createTestAccount("rest_webhooks"), createTestAccount("rest_webhooks")]);
  receiver = await startReceiver();
});
afterAll(() => receiver?.stop());

async function rest(method: string, path: string, token: string, body?: unknown) {
  const res = await handleRestRequest(
    new Request(`http://127.0.0.1/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, type: res.headers.get("content-type"), json: text ? JSON.parse(text) : null };
}

describe("/api/v1/webhook_endpoints with an API key", () => {
  it("POST answers the endpoint with its secret once; GET lists it without; DELETE removes it", async () => {
    const made = await rest("POST", "/webhook_endpoints", alice.token, {
      url: receiver.url,
      events: ["payment.succeeded", "refund.succeeded"],
    });
    expect(made.status).toBe(200);
    expect(made.json).toMatchObject({
      url: receiver.url,
      events: ["payment.succeeded", "refund.succeeded"],
      status: "enabled",
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{40,}$/),
    });
    const listed = await rest("GET", "/webhook_endpoints", alice.token);
    expect(listed.json).toEqual([expect.objectContaining({ id: made.json.id })]);
    expect(JSON.stringify(listed.json)).not.toContain("whsec_");
    expect((await rest("GET", "/webhook_endpoints", bob.token)).json).toEqual([]);
    expect((await rest("DELETE", `/webhook_endpoints/${made.json.id}`, bob.token)).status).toBe(404);

    const test = await rest("POST", `/webhook_endpoints/${made.json.id}/test`, alice.token, {});
    expect(test).toMatchObject({ status: 200 });
    await waitFor("the test event", async () => {
      await deliverDueMessages(db(), { endpointIds: [made.json.id] });
      return receiver.received.length === 1;
    });
    const got = receiver.received[0];
    expect(got?.headers["webhook-id"]).toBe(test.json.messageId);
    expect(new Webhook(made.json.secret).verify(got?.body ?? "", got?.headers ?? {})).toMatchObject({
      type: "webhook.test",
    });
    const deliveries = await rest("GET", `/webhook_endpoints/${made.json.id}/deliveries`, alice.token);
    expect(deliveries.json).toEqual([
      expect.objectContaining({
        messageId: test.json.messageId,
        status: "succeeded",
        attempts: 1,
        last: expect.objectContaining({ httpStatus: 200, outcome: "succeeded" }),
      }),
    ]);

    const rotated = await rest("POST", `/webhook_endpoints/${made.json.id}/rotate_secret`, alice.token, {
      overlapSeconds: 60,
    });
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(made.json.secret);
    const replayed = await rest("POST", `/webhook_messages/${test.json.messageId}/replay`, alice.token, {});
    expect(replayed.json).toEqual({ replayed: true });

    expect((await rest("DELETE", `/webhook_endpoints/${made.json.id}`, alice.token)).json).toEqual({
      deleted: true,
    });
    expect((await rest("GET", "/webhook_endpoints", alice.token)).json).toEqual([]);
  });

  it("bad input is a problem+json 400 that says what is wrong", async () => {
    const badEvent = await rest("POST", "/webhook_endpoints", alice.token, {
      url: receiver.url,
      events: ["payment.exploded"],
    });
    expect([badEvent.status, badEvent.type]).toEqual([400, "application/problem+json"]);
    expect(badEvent.json.detail).toMatch(/events/);
    const badUrl = await rest("POST", "/webhook_endpoints", alice.token, {
      url: "http://10.0.0.1/hooks",
      events: ["payment.succeeded"],
    });
    expect([badUrl.status, badUrl.type]).toEqual([400, "application/problem+json"]);
    expect(badUrl.json).toMatchObject({
      reason: "webhook_url_refused",
      detail: expect.stringMatching(/10\.0\.0\.1/),
    });
    const noAuth = await rest("GET", "/webhook_endpoints", "sk_test_nobody");
    expect(noAuth.status).toBe(401);
  });
});
