// One statement from several modules: typed parts, coded requirements, and the read-ahead of a
// completed key that an app's own statement may carry (`peekCompletedKey`).
export { type PeekedKey, peekCompletedKey } from "../peek.js";
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
  Sql,
  type Statement,
  StatementBuilder,
  type StatementPart,
  sql,
} from "../sql.js";
export type { StatementWrites } from "../store.js";
