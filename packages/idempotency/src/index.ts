// The front door: what an app mounts. SQL composition is `/sql`, the admin's read model and the
// key header's parser `/admin`, the hot statements for a benchmark `/bench`.
export type { RecoveryBackoff } from "./abandoned.js";
export type { Driver } from "./completer.js";
export { createIdempotency, type Idempotency, type ProcedureOptions } from "./create.js";
export { type KeyDb, nodePostgresKeyDb } from "./db.js";
export { ErrorDetails, errorDetailsOf } from "./error-details.js";
export { type FirstPhase, IDEMPOTENCY_DEFAULTS, type RequestObservation } from "./middleware.js";
export { isLeaseLost, type KeyOwner, LeaseLostError } from "./owner.js";
