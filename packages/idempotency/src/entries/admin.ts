// The operators' read model of the key table, the outcome counts, and the key header's rules.
export { DEFAULT_BACKOFF } from "../abandoned.js";
export type { DriveOutcome } from "../completer.js";
export { OUTCOMES, type Outcome, outcomeSeries, outcomeTotals } from "../counters.js";
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
} from "../inspect.js";
export { checkIdempotentCall, MAX_KEY_LENGTH, parseIdempotencyKey } from "../key-header.js";
export { KEY_STATES, type KeyState, keyStateCondition, keyStateSql, NEEDS_ATTENTION } from "../key-states.js";
export { type IdempotencyObservation, maxAttemptSeconds } from "../middleware.js";
export { recordKeyEvent } from "../store.js";
