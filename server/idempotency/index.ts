export {
  type AbandonedCandidate,
  type AbandonedKey,
  findAbandonedKeys,
  MAX_ATTEMPTS,
  takeOverAbandoned,
} from "./abandoned";
export { counters, OUTCOMES, type Outcome, outcomeSeries, outcomeTotals } from "./counters";
export { canonicalize, fingerprint } from "./fingerprint";
export { MAX_KEY_LENGTH, parseIdempotencyKey } from "./key-header";
export {
  type FirstPhase,
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyOptions,
  idempotent,
  runAsOwner,
} from "./middleware";
export { type KeyOwner, LeaseLostError } from "./owner";
export type { StatementWrites, Tx } from "./store";
export { sweepExpiredKeys } from "./sweep";
