export {
  type AbandonedCandidate,
  type AbandonedKey,
  findAbandonedKeys,
  MAX_ATTEMPTS,
  takeOverAbandoned,
} from "./abandoned";
export { counters, OUTCOMES, type Outcome, outcomeSeries, outcomeTotals } from "./counters";
export { canonicalize, fingerprint, pickFields } from "./fingerprint";
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
/** The hot statements' SQL, for the bench's node-postgres comparison only. */
export { claimStatement, completionStatement, firstPhaseKey } from "./store";
export { sweepExpiredKeys } from "./sweep";
