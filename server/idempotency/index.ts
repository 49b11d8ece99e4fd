export {
  type AbandonedCandidate,
  type AbandonedKey,
  abandonedKeyStats,
  findAbandonedKeys,
  MAX_ATTEMPTS,
  takeOverAbandoned,
} from "./abandoned";
export { counters, OUTCOMES, type Outcome, outcomeSeries, outcomeTotals } from "./counters";
export { canonicalize, fingerprint } from "./fingerprint";
export { MAX_KEY_LENGTH, parseIdempotencyKey } from "./key-header";
export {
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyObservation,
  type IdempotencyOptions,
  idempotent,
  type RequestObservation,
  runAsOwner,
} from "./middleware";
export { type KeyOwner, LeaseLostError } from "./owner";
export type { Tx } from "./store";
export { sweepExpiredKeys } from "./sweep";
