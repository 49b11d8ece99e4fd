import { randomUUID } from "node:crypto";
import createFetchClient from "openapi-fetch";
import { untilFinal } from "./attempts.js";
import { type CheckoutError, checkoutError, isCheckoutError } from "./errors.js";
import type { components, paths } from "./generated/api.js";
import {
  type IntentStore,
  type PaymentRequest,
  type PaymentResult,
  type StoredIntent,
  sameRequest,
} from "./intents.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";

export interface ClientOptions {
  /** The deployment, e.g. `http://localhost:3000` (the API is under `/api/v1`). */
  baseUrl: string;
  /** A customer API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Where intents wait for their final answer: `fileStore`, `pgStore` or `memoryStore`. */
  store: IntentStore;
  /** Overrides of the retry policy's defaults (`DEFAULT_RETRY_POLICY`). */
  retry?: Partial<RetryPolicy>;
  /** Another fetch (a proxy agent, instrumentation). */
  fetch?: typeof globalThis.fetch;
}

/** How `resume()` reports each intent it settled. */
export type IntentOutcome =
  | { intentId: string; ok: true; payment: PaymentResult }
  | { intentId: string; ok: false; error: CheckoutError | Error };

type Order = components["schemas"]["OrderCreated"];
type OrderItems = { items: { sku: string; quantity: number }[] };

/** Intents `resume()` settles at once. */
const RESUME_CONCURRENCY = 4;

export function createClient(options: ClientOptions) {
  const { store, apiKey } = options;
  if (typeof apiKey !== "string" || apiKey === "") throw new TypeError("createClient: apiKey is required");
  const base = new URL(options.baseUrl);
  if (!/\/api\/v1\/?$/.test(base.pathname)) base.pathname = `${base.pathname.replace(/\/$/, "")}/api/v1`;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const api = createFetchClient<paths>({
    baseUrl: base.toString().replace(/\/$/, ""),
    headers: { authorization: `Bearer ${apiKey}` },
    fetch: options.fetch,
  });
  // One settlement per intent in this process: create() and resume() on the same id share it.
  const settling = new Map<string, Promise<PaymentResult>>();

  function settle(intent: StoredIntent): Promise<PaymentResult> {
    let running = settling.get(intent.intentId);
    if (!running) {
      running = settlePayment(intent).finally(() => settling.delete(intent.intentId));
      settling.set(intent.intentId, running);
    }
    return running;
  }

  async function settlePayment(intent: StoredIntent): Promise<PaymentResult> {
    const { data, response } = await untilFinal(
      (signal) =>
        api.POST("/payments", {
          params: { header: { "Idempotency-Key": intent.key } },
          body: intent.request.body,
          signal,
        }),
      {
        policy,
        retryUnanswered: true,
        intentId: intent.intentId,
        onFinal: () => store.delete(intent.intentId),
      },
    );
    return {
      ...data,
      intentId: intent.intentId,
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  }

  return {
    payments: {
      /**
       * Pays an order once. The intent (its id, a new Idempotency-Key and the request) is stored
       * before the first attempt; retries, a later call with the same `intentId` and `resume()`
       * all send that key. Resolves to the payment; a final refusal (402, 422, other 4xx) throws
       * and the intent is forgotten; running out of time throws `deadline-exceeded` and keeps it.
       */
      async create(request: PaymentRequest, opts: { intentId?: string } = {}): Promise<PaymentResult> {
        const intentId = opts.intentId ?? randomUUID();
        if (typeof intentId !== "string" || intentId === "")
          throw new TypeError("payments.create: intentId must be a non-empty string");
        const wanted = {
          operation: "payments.create" as const,
          body: { orderId: request.orderId, paymentMethod: request.paymentMethod },
        };
        const stored = await store.create({
          intentId,
          key: randomUUID(),
          request: wanted,
          createdAt: new Date().toISOString(),
        });
        if (!sameRequest(stored.request, wanted))
          throw checkoutError(
            "intent-conflict",
            `Intent ${intentId} is stored for another request (order ${stored.request.body.orderId}, ${stored.request.body.paymentMethod})`,
            { intentId, final: false },
          );
        return settle(stored);
      },
      /** A payment of this account. */
      async get(id: string) {
        const { data } = await untilFinal(
          (signal) => api.GET("/payments/{id}", { params: { path: { id } }, signal }),
          { policy, retryUnanswered: true },
        );
        return data;
      },
    },
    orders: {
      /**
       * Creates an order. The API takes no key for orders, so an attempt that got no answer is
       * not sent again (it may have made the order); 429 and 5xx answers are retried.
       */
      async create(request: OrderItems): Promise<Order> {
        const { data } = await untilFinal((signal) => api.POST("/orders", { body: request, signal }), {
          policy,
          retryUnanswered: false,
        });
        return data;
      },
    },
    products: {
      async list() {
        const { data } = await untilFinal((signal) => api.GET("/products", { signal }), {
          policy,
          retryUnanswered: true,
        });
        return data;
      },
    },
    /**
     * Settles every intent in the store (left by a crash, or by `deadline-exceeded`) with its
     * stored key, and resolves to each one's outcome.
     */
    async resume(): Promise<IntentOutcome[]> {
      const intents = await store.list();
      const outcomes: IntentOutcome[] = new Array(intents.length);
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < intents.length; i = next++) {
          const intent = intents[i] as StoredIntent;
          try {
            outcomes[i] = { intentId: intent.intentId, ok: true, payment: await settle(intent) };
          } catch (error) {
            const failure = error instanceof Error ? error : new Error(String(error));
            outcomes[i] = { intentId: intent.intentId, ok: false, error: failure };
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(RESUME_CONCURRENCY, intents.length) }, worker));
      return outcomes;
    },
    /** Whether `error` is this client's (by brand: it may come from another copy of the package). */
    isError: isCheckoutError,
  };
}

export type CheckoutClient = ReturnType<typeof createClient>;
