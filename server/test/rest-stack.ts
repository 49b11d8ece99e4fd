import { randomUUID } from "node:crypto";
import { startTestProvider } from "./payments";
import { startApiProcess } from "./processes";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** The provider and the API (REST + tRPC, no Next build) as real processes, for HTTP tests. */
export async function startRestStack() {
  const provider = await startTestProvider();
  const api = await startApiProcess({ PAYMENT_PROVIDER_URL: provider.url });
  return {
    url: api.url,
    provider,
    async stop() {
      await api.stop();
      await provider.stop();
    },
  };
}
export type RestStack = Awaited<ReturnType<typeof startRestStack>>;

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.key !== undefined) headers["idempotency-key"] = opts.key;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body:
      opts.body === undefined
        ? undefined
        : typeof opts.body === "string"
          ? opts.body
          : JSON.stringify(opts.body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** A new order of this account, through the REST surface. */
export async function restOrder(
  base: string,
  token: string,
  quantity = 1,
): Promise<{ id: string; total: number }> {
  const res = await call(base, "POST", "/api/v1/orders", {
    token,
    body: { items: [{ sku: "TEE-CLASSIC", quantity }] },
  });
  if (res.status !== 200) throw new Error(`POST /api/v1/orders answered ${res.status}: ${res.text}`);
  return JSON.parse(res.text) as { id: string; total: number };
}

export function restPay(
  base: string,
  token: string,
  key: string | undefined,
  body: { orderId: string; paymentMethod: string; [field: string]: unknown },
  headers: Record<string, string> = {},
) {
  return call(base, "POST", "/api/v1/payments", { token, key, body, headers });
}

export const json = (a: Answer) => JSON.parse(a.text) as Record<string, unknown>;
export const newKey = () => randomUUID();
