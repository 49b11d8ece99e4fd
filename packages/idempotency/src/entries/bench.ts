// The hot statements' SQL, for a benchmark that sends them through a driver alone.
export { fingerprint, pickFields } from "../fingerprint.js";
export { firstPhaseStatement } from "../middleware.js";
export {
  type ClaimedKey,
  claimStatement,
  completionStatement,
  FENCE_LOST,
  FIRST_PHASE_EMPTY,
  firstPhaseKey,
} from "../store.js";
