export { type CheckoutClient, type ClientOptions, createClient, type IntentOutcome } from "./client.js";
export type { ApiProblemCode, CheckoutError, CheckoutErrorCode } from "./errors.js";
export type {
  IntentRequest,
  IntentStore,
  Payment,
  PaymentMethod,
  PaymentRequest,
  PaymentResult,
  Problem,
  StoredIntent,
} from "./intents.js";
export type { RetryPolicy } from "./retry.js";
export { fileStore } from "./stores/file.js";
export { memoryStore } from "./stores/memory.js";
export { type PgStoreOptions, pgStore, type Queryable } from "./stores/pg.js";
