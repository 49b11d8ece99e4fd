import type { z } from "zod";

/**
 * An intent: one attempt at one operation (a payment, a refund), and the Idempotency-Key every
 * request of that attempt carries. It is written to storage before its first request leaves, so
 * a reload or a reopened tab resumes it with the same key. An intent is kept per scope (an
 * order for a payment, a payment for a refund): a new press replaces the scope's previous one.
 */
export interface KeyedIntent {
  idempotencyKey: string;
  createdAt: string;
  /** The outcome the user acts on; an intent without one is unfinished and is resumed. */
  settled?: string | undefined;
}

export type IntentStorage = Pick<Storage, "getItem" | "setItem" | "key" | "length">;

export interface IntentFactory {
  newKey(): string;
  now(): Date;
}

export const browserIntentFactory: IntentFactory = {
  newKey: () => crypto.randomUUID(),
  now: () => new Date(),
};

export type IntentRequest<I extends KeyedIntent> = Omit<I, "idempotencyKey" | "createdAt" | "settled">;
export type IntentStore<I extends KeyedIntent> = ReturnType<typeof intentStore<I>>;

/** The intents of one operation, stored under `prefix` + their scope, read back through `schema`. */
export function intentStore<I extends KeyedIntent>(opts: {
  prefix: string;
  schema: z.ZodType<I>;
  scopeOf(intent: I): string;
}) {
  const storageKey = (scope: string) => `${opts.prefix}${scope}`;

  /** The scope's intent, or null when there is none or what is stored is not one. */
  function read(storage: IntentStorage, scope: string): I | null {
    const parsed = opts.schema.safeParse(parseJson(storage.getItem(storageKey(scope))));
    return parsed.success && opts.scopeOf(parsed.data) === scope ? parsed.data : null;
  }

  function write(storage: IntentStorage, intent: I) {
    try {
      storage.setItem(storageKey(opts.scopeOf(intent)), JSON.stringify(intent));
    } catch {
      // Storage full or blocked: the intent still lives in memory for this tab's retries; only a
      // reload could not resume it. Refusing to go on would help no one.
    }
  }

  return {
    scopeOf: opts.scopeOf,
    read,
    /** A new intent with a new key, saved (replacing the scope's previous one) before it is returned. */
    start(
      storage: IntentStorage,
      request: IntentRequest<I>,
      factory: IntentFactory = browserIntentFactory,
    ): I {
      const intent = {
        ...request,
        idempotencyKey: factory.newKey(),
        createdAt: factory.now().toISOString(),
      } as I;
      write(storage, intent);
      return intent;
    },
    /**
     * Records the outcome of `intent`, unless the scope's stored intent has since been replaced (by
     * another tab): that newer intent is left as it is, to be resumed.
     */
    settle(storage: IntentStorage, intent: I, outcome: NonNullable<I["settled"]>) {
      const stored = read(storage, opts.scopeOf(intent));
      if (stored && stored.idempotencyKey !== intent.idempotencyKey) return;
      write(storage, { ...intent, settled: outcome });
    },
    /** The most recent unfinished intent of any scope. */
    latestUnfinished(storage: IntentStorage): I | null {
      let latest: I | null = null;
      for (let i = 0; i < storage.length; i++) {
        const name = storage.key(i);
        if (!name?.startsWith(opts.prefix)) continue;
        const intent = read(storage, name.slice(opts.prefix.length));
        if (intent && !intent.settled && (!latest || intent.createdAt > latest.createdAt)) latest = intent;
      }
      return latest;
    },
  };
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
