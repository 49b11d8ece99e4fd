import createFetchClient from "openapi-fetch";
import { attemptOf, deadlineError, errorOf } from "./answers.js";
import { type AttemptOptions, untilFinal } from "./core/attempts.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./core/retry.js";
import { type CheckoutError, checkoutError, isCheckoutError } from "./errors.js";
import type { components, paths } from "./generated/api.js";
import {
  type CancelRequest,
  type CaptureRequest,
  describeRequest,
  type IntentRequest,
  type IntentStore,
  type Payment,
  type PaymentRequest,
  type PaymentResult,
  type StoredIntent,
  sameRequest,
} from "./intents.js";

export interface ClientOptions {
  /** The deployment, e.g. `http://localhost:3000` (the API is under `/api/v1`). */
  baseUrl: string;
  /**
   * A customer API key, sent as `Authorization: Bearer`; for the operators' calls
   * (`payments.capture`, `payments.cancel`), the deployment's `ADMIN_TOKEN`.
   */
  apiKey: string;
  /** Where intents wait for their final answer: `fileStore`, `pgStore` or `memoryStore`. */
  store: IntentStore;
  /** Overrides of the retry policy's defaults (`DEFAULT_RETRY_POLICY`). */
  retry?: Partial<RetryPolicy>;
  /** Another fetch (a proxy agent, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** How long `resume()` keeps reporting an answered intent nobody forgot (default 24 hours, as the server keeps keys). */
  keepAnswersMs?: number;
}

/** How `resume()` reports each intent it settled. */
export type IntentOutcome =
  | { intentId: string; ok: true; payment: PaymentResult }
  | { intentId: string; ok: false; error: CheckoutError | Error };

type Order = components["schemas"]["OrderCreated"];
type OrderItems = { items: { sku: string; quantity: number }[] };

/** Intents `resume()` settles at once. */
const RESUME_CONCURRENCY = 4;
const DAY_MS = 24 * 60 * 60 * 1000;

export function createClient(options: ClientOptions) {
  const { store, apiKey } = options;
  if (typeof apiKey !== "string" || apiKey === "") throw new TypeError("createClient: apiKey is required");
  const base = new URL(options.baseUrl);
  if (!/\/api\/v1\/?$/.test(base.pathname)) base.pathname = `${base.pathname.replace(/\/$/, "")}/api/v1`;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const loop: AttemptOptions = { policy };
  const keepAnswersMs = options.keepAnswersMs ?? DAY_MS;
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
    // Answered before (the caller may have crashed before it read the answer): the same answer.
    if (intent.answer) return answered(intent, intent.answer.status, intent.answer.body, true);
    const settled = await untilFinal((signal) => attemptOf(() => send(intent, signal)), loop);
    if (settled.kind === "deadline")
      throw deadlineError(
        errorOf(settled.failure, intent.intentId, false),
        policy.deadlineMs,
        settled.attempts,
        intent.intentId,
      );
    const { status, body, replayed } =
      settled.kind === "succeeded"
        ? { status: 200, body: settled.value.data, replayed: settled.value.replayed }
        : { status: settled.failure.status ?? 0, body: settled.failure.error, replayed: false };
    // Kept with the intent before the caller hears it, until the caller forgets it; a payment
    // awaiting the shopper's 3-D Secure step is not final: the next call asks again with the key.
    const awaitingShopper = status === 200 && (body as Payment | undefined)?.status === "requires_action";
    if (!awaitingShopper)
      await store.settle?.(intent, { status, body, answeredAt: new Date().toISOString() });
    return answered(intent, status, body, replayed);
  }

  /** One attempt of an intent's request, with its stored key. */
  function send(intent: StoredIntent, signal: AbortSignal) {
    const header = { "Idempotency-Key": intent.key };
    switch (intent.request.operation) {
      case "payments.create":
        return api.POST("/payments", { params: { header }, body: intent.request.body, signal });
      case "payments.capture": {
        const { paymentId, amountMinor } = intent.request.body;
        return api.POST("/payments/{id}/capture", {
          params: { header, path: { id: paymentId } },
          body: amountMinor === undefined ? {} : { amountMinor },
          signal,
        });
      }
      case "payments.cancel":
        return api.POST("/payments/{id}/cancel", {
          params: { header, path: { id: intent.request.body.paymentId } },
          // The document declares no body, yet the server answers a POST without a JSON
          // content type 415: an empty object satisfies both.
          body: {} as never,
          signal,
        });
    }
  }

  /**
   * Stores a new intent for `wanted` (or finds the one stored under its id) before anything is
   * sent, then settles it: the same intent id always sends the same key.
   */
  async function keyed(wanted: IntentRequest, intentId: string): Promise<PaymentResult> {
    if (typeof intentId !== "string" || intentId === "")
      throw new TypeError(`${wanted.operation}: intentId must be a non-empty string`);
    const stored = await store.create({
      intentId,
      key: crypto.randomUUID(),
      request: wanted,
      createdAt: new Date().toISOString(),
    });
    if (!sameRequest(stored.request, wanted))
      throw checkoutError(
        "intent-conflict",
        `Intent ${intentId} is stored for another request (${describeRequest(stored.request)})`,
        { intentId, final: false },
      );
    return settle(stored);
  }

  function answered(intent: StoredIntent, status: number, body: unknown, replayed: boolean): PaymentResult {
    if (status >= 200 && status < 300) return { ...(body as Payment), intentId: intent.intentId, replayed };
    throw errorOf({ status, error: body }, intent.intentId, true);
  }

  /** Reads and orders: the same loop, without an intent. */
  async function read<T>(
    send: (signal: AbortSignal) => ReturnType<typeof attemptOf<T>>,
    retryUnanswered = true,
  ) {
    const settled = await untilFinal(send, { ...loop, retryUnanswered });
    if (settled.kind === "succeeded") return settled.value.data;
    const last = errorOf(settled.failure, undefined, settled.kind === "final");
    throw settled.kind === "final" ? last : deadlineError(last, policy.deadlineMs, settled.attempts);
  }

  return {
    payments: {
      /**
       * Pays an order once. The intent (its id, a new Idempotency-Key and the request) is stored
       * before the first attempt; retries, a later call with the same `intentId` and `resume()`
       * all send that key. Resolves to the payment; a final refusal (402, 422, other 4xx) throws.
       * Either final answer is kept with the intent (the same intent id gets it again, without a
       * request) until `forget(intentId)`; running out of time throws `deadline-exceeded`.
       */
      async create(request: PaymentRequest, opts: { intentId?: string } = {}): Promise<PaymentResult> {
        const body = {
          orderId: request.orderId,
          paymentMethod: request.paymentMethod,
          ...(request.captureMethod && { captureMethod: request.captureMethod }),
          ...(request.returnUrl && { returnUrl: request.returnUrl }),
        };
        return keyed({ operation: "payments.create", body }, opts.intentId ?? crypto.randomUUID());
      },
      /**
       * For operators (`apiKey`: the `ADMIN_TOKEN`): captures an authorized payment, all of it or
       * `amountMinor`, keyed like `create`: the intent and its key are stored first, every retry
       * sends that key, the final answer is kept with the intent. Of a capture, a cancel and the
       * expiry racing, one wins: a 409 `payment-not-capturable` with `Retry-After` (the winner is
       * still running) is retried, without it (another won) it is final and thrown.
       */
      async capture(request: CaptureRequest, opts: { intentId?: string } = {}): Promise<PaymentResult> {
        const body = {
          paymentId: request.paymentId,
          ...(request.amountMinor !== undefined && { amountMinor: request.amountMinor }),
        };
        return keyed({ operation: "payments.capture", body }, opts.intentId ?? crypto.randomUUID());
      },
      /** For operators: cancels an authorized payment (the hold released), keyed like `capture`. */
      async cancel(request: CancelRequest, opts: { intentId?: string } = {}): Promise<PaymentResult> {
        const body = { paymentId: request.paymentId };
        return keyed({ operation: "payments.cancel", body }, opts.intentId ?? crypto.randomUUID());
      },
      /** A payment of this account. */
      async get(id: string) {
        return read((signal) =>
          attemptOf(() => api.GET("/payments/{id}", { params: { path: { id } }, signal })),
        );
      },
    },
    orders: {
      /**
       * Creates an order. The API takes no key for orders, so an attempt that got no answer is
       * not sent again (it may have made the order); 429 and 5xx answers are retried.
       */
      async create(request: OrderItems): Promise<Order> {
        return read((signal) => attemptOf(() => api.POST("/orders", { body: request, signal })), false);
      },
    },
    products: {
      async list() {
        return read((signal) => attemptOf(() => api.GET("/products", { signal })));
      },
    },
    /**
     * Settles every intent in the store (left by a crash, or by `deadline-exceeded`) with its
     * stored key, and resolves to each one's outcome; an intent answered before reports its kept
     * answer without a request, until `forget` (or, after `keepAnswersMs`, this call) removes it.
     */
    async resume(): Promise<IntentOutcome[]> {
      const intents: StoredIntent[] = [];
      for (const intent of await store.list()) {
        const answeredAt = intent.answer ? Date.parse(intent.answer.answeredAt) : Number.NaN;
        if (Date.now() - answeredAt > keepAnswersMs) await store.delete(intent.intentId);
        else intents.push(intent);
      }
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
    /**
     * Forgets an intent once its answer is recorded on the caller's side: the same intent id is
     * then a new intent with a new key.
     */
    forget(intentId: string): Promise<void> {
      return store.delete(intentId);
    },
    /** Whether `error` is this client's (by brand: it may come from another copy of the package). */
    isError: isCheckoutError,
  };
}

export type CheckoutClient = ReturnType<typeof createClient>;
