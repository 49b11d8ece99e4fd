import type { IntentStore, StoredIntent } from "./intents.js";

/** What the store needs of `localStorage` (spelled out: this package is compiled without the DOM's types). */
export interface IntentStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(name: string): string | null;
  setItem(name: string, value: string): void;
  removeItem(name: string): void;
}

export interface LocalStorageStoreOptions<R> {
  /** `localStorage`, read when used: there is none while the server renders. */
  storage(): IntentStorage;
  /** Every intent's item name starts with it, followed by the intent id. */
  prefix: string;
  /** What is stored read back, or null when it is not an intent of this store (a stale format). */
  parse(value: unknown): StoredIntent<R> | null;
}

/**
 * Intents in the browser's storage, one item per intent. Storage is the browser's to clear and
 * may refuse a write (full, blocked): a refused write is let go, since the intent still lives in
 * the page for its retries and only a reload could not resume it.
 */
export function localStorageStore<R>(opts: LocalStorageStoreOptions<R>): IntentStore<R> {
  const itemOf = (intentId: string) => `${opts.prefix}${intentId}`;

  function read(intentId: string): StoredIntent<R> | null {
    const text = opts.storage().getItem(itemOf(intentId));
    const intent = text === null ? null : opts.parse(parseJson(text));
    return intent?.intentId === intentId ? intent : null;
  }

  function write(intent: StoredIntent<R>) {
    try {
      opts.storage().setItem(itemOf(intent.intentId), JSON.stringify(intent));
    } catch {
      // Refused: see above.
    }
  }

  return {
    async create(intent) {
      const existing = read(intent.intentId);
      if (existing) return existing;
      write(intent);
      return intent;
    },
    async list() {
      const storage = opts.storage();
      const intents: StoredIntent<R>[] = [];
      for (let i = 0; i < storage.length; i++) {
        const name = storage.key(i);
        const intent = name?.startsWith(opts.prefix) ? read(name.slice(opts.prefix.length)) : null;
        if (intent) intents.push(intent);
      }
      return intents.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    async delete(intentId) {
      opts.storage().removeItem(itemOf(intentId));
    },
    async settle(intent, answer) {
      // Another tab may have replaced the intent since: that one is left to be resumed.
      const stored = read(intent.intentId);
      if (stored?.key === intent.key) write({ ...stored, answer });
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
