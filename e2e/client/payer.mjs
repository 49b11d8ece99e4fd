import { createClient, fileStore } from "@idempotent-checkout/client";

/**
 * A merchant's job that pays through the SDK, in plain Node on the compiled package (dist), as
 * a process of its own that a test can kill:
 * `pay` pays one order under one intent id, `resume` settles what the store holds. Prints one
 * JSON line with the outcome.
 */
const [mode, baseUrl, storePath, orderId, intentId, paymentMethod = "pm_card_visa"] = process.argv.slice(2);
if (!baseUrl || !storePath)
  throw new Error("usage: payer.mjs pay|resume <baseUrl> <store> [orderId intentId [paymentMethod]]");
const client = createClient({
  baseUrl,
  apiKey: "sk_test_alice",
  store: fileStore(storePath),
  retry: { deadlineMs: 30_000 },
});
if (mode === "pay") {
  if (!orderId || !intentId) throw new Error("pay needs an order id and an intent id");
  console.log("paying");
  const payment = await client.payments.create({ orderId, paymentMethod }, { intentId });
  console.log(JSON.stringify({ payment }));
} else {
  console.log(JSON.stringify({ outcomes: await client.resume() }));
}
