/**
 * The keyed client's core (`@idempotent-checkout/client/core`), shared by the SDK and the
 * browser: the intent store's interface and its browser and memory stores, one attempt loop and
 * one retry policy. It imports nothing of Node, so a browser bundle may take it.
 */
export {
  type Attempt,
  type AttemptOptions,
  type Failure,
  type Progress,
  type Settled,
  untilFinal,
} from "./attempts.js";
export { type IntentStore, latestUnanswered, type StoredAnswer, type StoredIntent } from "./intents.js";
export { type IntentStorage, type LocalStorageStoreOptions, localStorageStore } from "./local-storage.js";
export { memoryStore } from "./memory.js";
export {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  type RetryReason,
  retryDelay,
  type Verdict,
  verdictFor,
} from "./retry.js";
