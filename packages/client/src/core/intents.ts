/**
 * One unfinished or answered call, written to a store before its first attempt leaves. The key is
 * made once, with the intent, and every attempt (in this process or after a restart) sends it.
 * `R` is what the intent asks for: the SDK's `IntentRequest`, a browser form's input.
 */
export interface StoredIntent<R = unknown> {
  /** The caller's id for this intent (e.g. their payout row's id, an order id), unique in the store. */
  intentId: string;
  /** The `Idempotency-Key` every attempt sends. */
  key: string;
  request: R;
  /** ISO 8601. */
  createdAt: string;
  /**
   * The final answer, once there is one. The intent is kept with it until the caller forgets it
   * (decision 0141): a caller that crashed before it read the answer asks again and gets it.
   */
  answer?: StoredAnswer | undefined;
}

/** A final answer as stored: its HTTP status (200 for a success) and what the caller reads of it. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  /** ISO 8601. */
  answeredAt: string;
}

/**
 * Where intents live from before the first attempt until the caller forgets them. Each method
 * must be durable when its promise resolves (the write survives a crash of this process right
 * after), and `create` atomic against another process creating the same id.
 */
export interface IntentStore<R = unknown> {
  /**
   * Stores the intent unless one with its `intentId` is already there; resolves to the one that
   * is stored (the given one, or the earlier one, which is then left untouched).
   */
  create(intent: StoredIntent<R>): Promise<StoredIntent<R>>;
  /** Every stored intent, oldest first. */
  list(): Promise<StoredIntent<R>[]>;
  /** Forgets an intent; forgetting one that is not there is not an error. */
  delete(intentId: string): Promise<void>;
  /**
   * Records `answer` on the stored intent with this id and key; one replaced since (another key
   * under the id) or forgotten is left alone. Optional for stores written before it: without it
   * an answered intent stays unanswered, and asking again re-sends its key (the server replays
   * its stored answer while it keeps the key, 24 hours).
   */
  settle?(intent: StoredIntent<R>, answer: StoredAnswer): Promise<void>;
}

/** The newest intent without an answer, or null. */
export function latestUnanswered<R>(intents: StoredIntent<R>[]): StoredIntent<R> | null {
  let latest: StoredIntent<R> | null = null;
  for (const intent of intents)
    if (!intent.answer && (!latest || intent.createdAt > latest.createdAt)) latest = intent;
  return latest;
}
