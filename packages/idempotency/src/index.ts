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
} from "./abandoned.js";
export {
  counters,
  OUTCOMES,
  type Outcome,
  outcomeSeries,
  outcomeTotals,
  startCounterFlush,
} from "./counters.js";
export { type KeyDb, nodePostgresKeyDb, type PgClientLike, type PgPoolLike } from "./db.js";
export { deriveKey, deriveKeySql } from "./derived-key.js";
export { ErrorDetails, errorDetailsOf, isErrorDetails } from "./error-details.js";
export { canonicalize, fingerprint, pickFields } from "./fingerprint.js";
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
} from "./inspect.js";
export { checkIdempotentCall, MAX_KEY_LENGTH, parseIdempotencyKey } from "./key-header.js";
export { KEY_STATES, type KeyState, keyStateCondition, keyStateSql, NEEDS_ATTENTION } from "./key-states.js";
export {
  type FirstPhase,
  firstPhaseStatement,
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyHandle,
  type IdempotencyObservation,
  type IdempotencyOptions,
  idempotent,
  isStoredReplay,
  maxAttemptSeconds,
  type RequestObservation,
  replayable,
  runAsOwner,
  StoredReplay,
} from "./middleware.js";
export { isLeaseLost, KeyOwner, LeaseLostError } from "./owner.js";
export { type KeyPeek, type PeekedKey, peekCompletedKey } from "./peek.js";
export {
  Cte,
  empty,
  failedRequirement,
  isRequirementFailure,
  join,
  REQUIREMENT_SQLSTATE,
  type Requirement,
  RequirementFailedError,
  raw,
  requirement,
  requireSql,
  Sql,
  type Statement,
  StatementBuilder,
  type StatementPart,
  sql,
} from "./sql.js";
// claimStatement, completionStatement, firstPhaseStatement and firstPhaseKey: the hot statements'
// SQL, for a benchmark that sends them through a driver alone.
export {
  type ClaimedKey,
  claimStatement,
  completionStatement,
  FENCE_LOST,
  FIRST_PHASE_EMPTY,
  firstPhaseKey,
  recordKeyEvent,
  type StatementWrites,
} from "./store.js";
export { sweepExpiredKeys } from "./sweep.js";
