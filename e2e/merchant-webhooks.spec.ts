import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { bearer } from "./api";
import { expect, test } from "./fixtures";

/**
 * A merchant's webhooks from the account page (issue 41): register an endpoint (the secret shown
 * once), see a payment's delivery arrive signed and listed, replay it, rotate the secret. The
 * receiver is this spec's own server on loopback, which development allows.
 */
interface Received {
  id: string;
  body: string;
  headers: Record<string, string>;
}

async function startReceiver() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      received.push({
        id: headers["webhook-id"] ?? "",
        body: Buffer.concat(chunks).toString("utf8"),
        headers,
      });
      res.writeHead(200).end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, received, stop: () => server.close() };
}

test("register an endpoint, see a payment's delivery, replay it, rotate the secret", async ({
  page,
  request,
}) => {
  const receiver = await startReceiver();
  try {
    await page.goto("/account");
    const webhooks = page.getByRole("region", { name: "Webhooks" });
    await webhooks.getByLabel("URL").fill(receiver.url);
    await webhooks.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await webhooks.getByLabel("Webhook signing secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);

    const order = await request.post("/api/v1/orders", {
      headers: bearer("sk_test_alice"),
      data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
    });
    const { id: orderId } = (await order.json()) as { id: string };
    const paid = await request.post("/api/v1/payments", {
      headers: { ...bearer("sk_test_alice"), "idempotency-key": crypto.randomUUID() },
      data: { orderId, paymentMethod: "pm_card_visa" },
    });
    const { id: paymentId } = (await paid.json()) as { id: string };

    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    const first = receiver.received[0] as Received;
    const event = new Webhook(secret).verify(first.body, first.headers) as {
      type: string;
      data: { id: string };
    };
    expect(event).toMatchObject({ type: "payment.succeeded", data: { id: paymentId } });

    await page.reload();
    const endpoint = page.getByRole("article", { name: `Endpoint ${receiver.url}` });
    const row = endpoint.getByRole("row").filter({ hasText: "payment.succeeded" });
    await expect(row).toContainText("succeeded");
    await row.getByRole("button", { name: "Replay" }).click();
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    expect(receiver.received[1]?.id).toBe(first.id);

    await endpoint.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = (await endpoint.getByLabel("Webhook signing secret").textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await endpoint.getByRole("button", { name: "Send test event" }).click();
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const test = receiver.received[2] as Received;
    // During the overlap both secrets sign.
    expect(new Webhook(rotated).verify(test.body, test.headers)).toMatchObject({ type: "webhook.test" });
    expect(new Webhook(secret).verify(test.body, test.headers)).toMatchObject({ type: "webhook.test" });

    await endpoint.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("article", { name: `Endpoint ${receiver.url}` })).toHaveCount(0);
  } finally {
    receiver.stop();
  }
});
