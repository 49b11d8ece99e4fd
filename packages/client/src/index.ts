import { memoryStore as coreMemoryStore } from "./core/memory.js";
import type { IntentStore } from "./intents.js";

export { type CheckoutClient, type ClientOptions, createClient, type IntentOutcome } from "./client.js";
export type { RetryPolicy } from "./core/retry.js";
export type { ApiProblemCode, CheckoutError, CheckoutErrorCode } from "./errors.js";
export type {
  CancelRequest,
  CaptureRequest,
  IntentRequest,
  IntentStore,
  Payment,
  PaymentMethod,
  PaymentRequest,
  PaymentResult,
  Problem,
  StoredAnswer,
  StoredIntent,
} from "./intents.js";
export { fileStore } from "./stores/file.js";
export { type PgStoreOptions, pgStore, type Queryable } from "./stores/pg.js";

/** Intents in this process's memory: they die with it. For tests, and callers that never crash. */
export const memoryStore: () => IntentStore = coreMemoryStore;
