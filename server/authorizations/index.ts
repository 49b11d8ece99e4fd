export type { ActionRequest } from "./create";
export { EXPIRY_KEY_PREFIX, expireAuthorizations } from "./expiry";
export {
  type AuthorizationDeps,
  CANCEL_PROCEDURE,
  CAPTURE_PROCEDURE,
  cancel,
  capture,
  type StoredActionParams,
} from "./operations";
export { authorizationStats } from "./stats";
