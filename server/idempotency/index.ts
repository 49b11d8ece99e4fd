export {
  type AbandonedCandidate,
  type AbandonedKey,
  abandonedKeyStats,
  backoffSeconds,
  DEFAULT_BACKOFF,
  findAbandonedKeys,
  findUnfinishedKey,
  type RecoveryBackoff,
  takeOverAbandoned,
} from "./abandoned";
export {
  counters,
  OUTCOMES,
  type Outcome,
  outcomeSeries,
  outcomeTotals,
  startCounterFlush,
} from "./counters";
export { ErrorDetails, errorDetailsOf, isErrorDetails } from "./error-details";
export { canonicalize, fingerprint, pickFields } from "./fingerprint";
export {
  countKeysByState,
  findKey,
  type KeyDetail,
  type KeyEvent,
  type KeyListFilter,
  type KeyRef,
  type KeySummary,
  keyHistory,
  listKeys,
} from "./inspect";
export { checkIdempotentCall, MAX_KEY_LENGTH, parseIdempotencyKey } from "./key-header";
export { KEY_STATES, type KeyState, keyStateCondition, keyStateSql, NEEDS_ATTENTION } from "./key-states";
export {
  type FirstPhase,
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyHandle,
  type IdempotencyObservation,
  type IdempotencyOptions,
  idempotent,
  isStoredReplay,
  type RequestObservation,
  replayable,
  runAsOwner,
  StoredReplay,
} from "./middleware";
export { isLeaseLost, type KeyOwner, LeaseLostError } from "./owner";
// claimStatement, completionStatement and firstPhaseKey: the hot statements' SQL, for the
// bench's node-postgres comparison only.
export {
  claimStatement,
  completionStatement,
  firstPhaseKey,
  recordKeyEvent,
  type StatementWrites,
} from "./store";
export { sweepExpiredKeys } from "./sweep";
