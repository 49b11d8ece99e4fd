import type { APIRequestContext } from "@playwright/test";

/** A demo customer's API key (seeded outside production). */
export const bearer = (token: "sk_test_alice" | "sk_test_bob") => ({ authorization: `Bearer ${token}` });

/**
 * payments.create as a client sends it on one surface; `headers` go on top of Alice's key
 * (another customer's key, a test hook such as X-Provider-Fault).
 */
function payOn(path: string) {
  return (
    request: APIRequestContext,
    orderId: string,
    key: string,
    paymentMethod = "pm_card_visa",
    headers: Record<string, string> = {},
  ) =>
    request.post(path, {
      headers: { ...bearer("sk_test_alice"), "idempotency-key": key, ...headers },
      data: { orderId, paymentMethod },
      timeout: 20_000,
    });
}

export const payTrpc = payOn("/api/trpc/payments.create");
export const payRest = payOn("/api/v1/payments");
