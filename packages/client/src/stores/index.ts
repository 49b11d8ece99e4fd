/** The stores for servers (`@idempotent-checkout/client/stores`): Node only, never in a browser bundle. */
export { memoryStore } from "../index.js";
export { fileStore } from "./file.js";
export { type PgStoreOptions, pgStore, type Queryable } from "./pg.js";
