export type { Mismatch, MismatchKind } from "./checks";
export { resolveByOperator } from "./open-mismatches";
export {
  CHARGE_SOURCE,
  latestReconciliation,
  type ReconciliationReport,
  runReconciliation,
} from "./reconciler";
export { checkRefunds } from "./refunds";
