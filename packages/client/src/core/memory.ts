import type { IntentStore, StoredIntent } from "./intents.js";

/** Intents in this process's memory: they die with it. For tests, and callers that never crash. */
export function memoryStore<R = unknown>(): IntentStore<R> {
  const intents = new Map<string, StoredIntent<R>>();
  return {
    async create(intent) {
      const existing = intents.get(intent.intentId);
      if (existing) return structuredClone(existing);
      intents.set(intent.intentId, structuredClone(intent));
      return structuredClone(intent);
    },
    async list() {
      return [...intents.values()]
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        .map((i) => structuredClone(i));
    },
    async delete(intentId) {
      intents.delete(intentId);
    },
    async settle(intent, answer) {
      const stored = intents.get(intent.intentId);
      if (stored?.key === intent.key)
        intents.set(intent.intentId, { ...stored, answer: structuredClone(answer) });
    },
  };
}
