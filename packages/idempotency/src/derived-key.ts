import { createHash } from "node:crypto";
import { type Sql, sql } from "./sql.js";

/**
 * The downstream key for `purpose` of the key `keyId` in `scope` (account and client key): the
 * key row's id first, so new keys sort after old ones and append to the indexes that hold them
 * (ours and the provider's; decision 0046), then a digest that tells purposes and scopes apart.
 * This is the definition; `deriveKeySql` computes the same inside a statement (tested against it).
 */
export function deriveKey(scope: string, keyId: bigint, purpose: string): string {
  const digest = createHash("sha256").update(`${scope}\n${keyId}\n${purpose}`).digest("hex");
  return `ick_${keyId.toString(16).padStart(16, "0")}${digest.slice(0, 24)}`;
}

/**
 * `deriveKey` in SQL, for a statement that learns the key's id as it inserts it (a first phase
 * in the claim). `keyId` is a bigint expression.
 */
export function deriveKeySql(scope: string, keyId: Sql, purpose: string): Sql {
  return sql`('ick_' || lpad(to_hex(${keyId}), 16, '0') || left(encode(sha256(convert_to(${`${scope}\n`} || ${keyId}::text || ${`\n${purpose}`}, 'UTF8')), 'hex'), 24))`;
}
