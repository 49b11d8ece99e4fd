/**
 * The operations' code samples (`x-codeSamples`, which OpenAPI viewers show beside each operation):
 * our SDK, @idempotent-checkout/client, where it has the call, and curl for every operation.
 */

export interface CodeSample {
  lang: "TypeScript" | "Shell";
  label: string;
  source: string;
}

export const SDK_PACKAGE = "@idempotent-checkout/client";
const BASE_URL = "https://checkout.example";

const client = (apiKey: string) => `import { createClient, fileStore } from "${SDK_PACKAGE}";

const client = createClient({
  baseUrl: "${BASE_URL}",
  apiKey: ${apiKey},
  // Each intent and its Idempotency-Key are written here before the first attempt.
  store: fileStore("./intents"),
});
`;
const shopper = client("process.env.CHECKOUT_API_KEY");
const operator = client("process.env.ADMIN_TOKEN");

/** The SDK's call for each operation it covers, by operationId. */
const SDK_CALLS: Record<string, string> = {
  "catalog-list": `${shopper}
const products = await client.products.list();`,
  "orders-create": `${shopper}
// Not keyed: an order is only a priced basket until it is paid.
const order = await client.orders.create({ items: [{ sku: "TEE-CLASSIC", quantity: 2 }] });`,
  "payments-create": `${shopper}
// One intent per invoice: retries, and a call again after a crash, send the same key.
const payment = await client.payments.create(
  { orderId: order.id, paymentMethod: "pm_card_visa" },
  { intentId: invoice.id },
);
// Recorded in your books: the intent may go.
await client.forget(payment.intentId);`,
  "payments-get": `${shopper}
const payment = await client.payments.get(paymentId);`,
  "admin-payments-capture": `${operator}
// All of it, or amountMinor of it; keyed like payments.create.
const payment = await client.payments.capture({ paymentId, amountMinor: 1500 });`,
  "admin-payments-cancel": `${operator}
const payment = await client.payments.cancel({ paymentId });`,
};

interface OperationShape {
  operationId?: string;
  parameters?: { in?: string; name?: string }[];
  requestBody?: unknown;
  security?: Record<string, string[]>[];
}

/** A request body of the required fields, each an example or a placeholder of its type. */
function bodyExample(op: OperationShape): string | null {
  const schema = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.[
    "application/json"
  ]?.schema;
  if (!schema?.properties) return null;
  const example: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const p = schema.properties[name];
    example[name] = p?.examples?.[0] ?? p?.enum?.[0] ?? (p?.type === "integer" ? 1000 : `<${name}>`);
  }
  return JSON.stringify(example);
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  examples?: unknown[];
  enum?: unknown[];
}

function curl(method: string, path: string, op: OperationShape): string {
  const admin = op.security?.some((s) => "AdminToken" in s);
  const lines = [`curl -X ${method.toUpperCase()} "${BASE_URL}/api/v1${path.replace(/\{(\w+)\}/g, "<$1>")}"`];
  if (op.security?.length)
    lines.push(`-H "Authorization: Bearer ${admin ? "$ADMIN_TOKEN" : "$CHECKOUT_API_KEY"}"`);
  if (op.parameters?.some((p) => p.in === "header" && p.name === "Idempotency-Key"))
    lines.push(`-H "Idempotency-Key: $(uuidgen)"  # the same key for every retry of this request`);
  const body = bodyExample(op);
  if (body) lines.push(`-H "Content-Type: application/json"`, `-d '${body}'`);
  return lines.join(" \\\n  ");
}

/** The samples of one operation: the SDK's first when it has the call. */
export function codeSamples(method: string, path: string, op: OperationShape): CodeSample[] {
  const sdk = op.operationId ? SDK_CALLS[op.operationId] : undefined;
  return [
    ...(sdk ? [{ lang: "TypeScript" as const, label: SDK_PACKAGE, source: sdk }] : []),
    { lang: "Shell" as const, label: "curl", source: curl(method, path, op) },
  ];
}
