import { type IntentStore, localStorageStore, type StoredIntent } from "@idempotent-checkout/client/core";

export { latestUnanswered } from "@idempotent-checkout/client/core";

import { z } from "zod";

export type { IntentStorage, IntentStore, StoredIntent } from "@idempotent-checkout/client/core";

const ZAnswer = z.object({ status: z.number().int(), body: z.unknown(), answeredAt: z.iso.datetime() });

/**
 * One operation's intents in the browser's storage (the client package's `localStorageStore`),
 * one per scope: the intent id is the scope (an order for a payment, a payment for a refund), and
 * a new press replaces the scope's previous intent. `legacy` reads what an earlier version stored.
 */
export function browserIntents<R>(opts: {
  prefix: string;
  request: z.ZodType<R>;
  storage(): Storage;
  legacy?(value: unknown): StoredIntent<R> | null;
}): IntentStore<R> {
  const ZIntent = z.object({
    intentId: z.string().min(1),
    key: z.string().min(1).max(255),
    request: opts.request,
    createdAt: z.iso.datetime(),
    answer: ZAnswer.optional(),
  });
  return localStorageStore<R>({
    prefix: opts.prefix,
    storage: opts.storage,
    parse(value) {
      const parsed = ZIntent.safeParse(value);
      return parsed.success ? (parsed.data as StoredIntent<R>) : (opts.legacy?.(value) ?? null);
    },
  });
}

/**
 * Intents stored before the client package's core (decision 0008's format): the request's fields,
 * `idempotencyKey`, `createdAt` and the outcome's kind as `settled`. An unfinished one is resumed
 * with its key; a settled one counts as answered.
 */
export function legacyIntent<R>(request: z.ZodType<R>, scopeOf: (request: R) => string) {
  const ZLegacy = z.object({
    idempotencyKey: z.string().min(1).max(255),
    createdAt: z.iso.datetime(),
    settled: z.string().optional(),
  });
  return (value: unknown): StoredIntent<R> | null => {
    const old = ZLegacy.safeParse(value);
    const wanted = request.safeParse(value);
    if (!old.success || !wanted.success) return null;
    const { idempotencyKey, createdAt, settled } = old.data;
    const answer = settled ? { status: 0, body: { kind: settled }, answeredAt: createdAt } : undefined;
    return { intentId: scopeOf(wanted.data), key: idempotencyKey, request: wanted.data, createdAt, answer };
  };
}
