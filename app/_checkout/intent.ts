import { z } from "zod";

/**
 * A payment intent: one attempt to pay one order with one payment method, and the
 * Idempotency-Key every request of that attempt carries. It is written to localStorage before
 * its first request leaves, so a reload or a reopened tab resumes it with the same key.
 */
export const ZPaymentIntent = z.object({
  orderId: z.string().min(1),
  paymentMethod: z.string().min(1),
  idempotencyKey: z.string().min(1).max(255),
  createdAt: z.iso.datetime(),
  /** The outcome the shopper acts on; an intent without one is unfinished and is resumed. */
  settled: z.enum(["succeeded", "declined", "already_paid", "rejected"]).optional(),
});
export type TPaymentIntent = z.infer<typeof ZPaymentIntent>;
export type TSettledOutcome = NonNullable<TPaymentIntent["settled"]>;

export type IntentStorage = Pick<Storage, "getItem" | "setItem" | "key" | "length">;

const PREFIX = "checkout:intent:";
const storageKey = (orderId: string) => `${PREFIX}${orderId}`;

export interface IntentFactory {
  newKey(): string;
  now(): Date;
}

export const browserIntentFactory: IntentFactory = {
  newKey: () => crypto.randomUUID(),
  now: () => new Date(),
};

/** The order's intent, or null when there is none or what is stored is not one. */
export function readIntent(storage: IntentStorage, orderId: string): TPaymentIntent | null {
  const parsed = ZPaymentIntent.safeParse(parseJson(storage.getItem(storageKey(orderId))));
  return parsed.success && parsed.data.orderId === orderId ? parsed.data : null;
}

/** A new intent with a new key, saved (replacing the order's previous one) before it is returned. */
export function startIntent(
  storage: IntentStorage,
  request: { orderId: string; paymentMethod: string },
  factory: IntentFactory = browserIntentFactory,
): TPaymentIntent {
  const intent: TPaymentIntent = {
    orderId: request.orderId,
    paymentMethod: request.paymentMethod,
    idempotencyKey: factory.newKey(),
    createdAt: factory.now().toISOString(),
  };
  write(storage, intent);
  return intent;
}

/**
 * Records the outcome of `intent`, unless the order's stored intent has since been replaced (by
 * another tab): that newer intent is left as it is, to be resumed.
 */
export function settleIntent(storage: IntentStorage, intent: TPaymentIntent, outcome: TSettledOutcome) {
  const stored = readIntent(storage, intent.orderId);
  if (stored && stored.idempotencyKey !== intent.idempotencyKey) return;
  write(storage, { ...intent, settled: outcome });
}

/** The most recent unfinished intent of any order: what reopening the checkout resumes. */
export function latestUnfinishedIntent(storage: IntentStorage): TPaymentIntent | null {
  let latest: TPaymentIntent | null = null;
  for (let i = 0; i < storage.length; i++) {
    const name = storage.key(i);
    if (!name?.startsWith(PREFIX)) continue;
    const intent = readIntent(storage, name.slice(PREFIX.length));
    if (intent && !intent.settled && (!latest || intent.createdAt > latest.createdAt)) latest = intent;
  }
  return latest;
}

function write(storage: IntentStorage, intent: TPaymentIntent) {
  try {
    storage.setItem(storageKey(intent.orderId), JSON.stringify(intent));
  } catch {
    // Storage full or blocked: the intent still lives in memory for this tab's retries; only a
    // reload could not resume it. Refusing to pay would help no one.
  }
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
