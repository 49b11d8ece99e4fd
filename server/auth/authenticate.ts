// The library's guard, not instanceof: the auth instance on globalThis may be another Next layer's
// copy, and isAPIError also knows its errors by name (docs/decisions/0095).

import { parseIdempotencyKey } from "@idempotent-checkout/idempotency/admin";
import { empty, type PeekedKey, peekCompletedKey, type Sql, sql } from "@idempotent-checkout/idempotency/sql";
import { isAPIError } from "better-auth/api";
import { type Db, rawQuery } from "../db";
import { env } from "../env";
import { adminCookieName, adminSessionFor } from "./admin-sessions";
import { checkSecretFrom } from "./admin-token";
import { type ApiKeyScope, isTestKey, looksLikeApiKey } from "./api-key-format";
import { auth, SESSION_COOKIE } from "./auth";
import { clientAddress } from "./client-address";
import type { AdminRole } from "./roles";
import { hashToken } from "./tokens";

export interface Principal {
  account: { id: string; handle: string; name: string } | null;
  isAdmin: boolean;
  /**
   * Who acts as the admin, for the audit log: a named operator, a session of ADMIN_TOKEN, or the
   * Bearer ADMIN_TOKEN; and what they may do (decision 0200). Without a role, an owner (ADMIN_TOKEN).
   */
  admin?: { actor: string; sessionId?: string; role?: AdminRole; operatorId?: string };
  /** Present when the account came from an API key: what that key may do (decision 0062). */
  apiKeyScope?: ApiKeyScope;
  /**
   * The request's Idempotency-Key, read by the API key's own statement when it is completed: a
   * replay then sends no second statement (decision 0129). Absent for sessions and other callers.
   */
  peekedKey?: PeekedKey | null;
}

const ANONYMOUS: Principal = { account: null, isAdmin: false };

/** A cookie's value, or undefined when absent or not decodable (a malformed value is no session). */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join("="));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The account of a Bearer API key and the key's scope, in one indexed statement that also notes
 * when the key was last used (at most once a minute). Expired keys match nothing; so does a
 * test key (`sk_test_`) in production. Shared by every API surface that takes
 * `Authorization: Bearer sk_…` (tRPC here, the REST API too). With the request's Idempotency-Key
 * the same statement reads that key when it is completed (`peekedKey`, decision 0129).
 */
export async function accountForApiKey(
  prisma: Db,
  token: string,
  idempotencyKey?: string,
): Promise<{
  account: NonNullable<Principal["account"]>;
  scope: ApiKeyScope;
  peekedKey: PeekedKey | null;
} | null> {
  if (env.isProduction && isTestKey(token)) return null;
  const peek = idempotencyKey === undefined ? undefined : peekCompletedKey(sql`a.id`, idempotencyKey);
  const [row] = await rawQuery<{
    id: string;
    handle: string;
    name: string;
    scope: ApiKeyScope;
    peeked?: unknown;
  }>(prisma, accountByTokenStatement(hashToken(token), peek?.column));
  if (!row) return null;
  const { scope, peeked, ...account } = row;
  return { account, scope, peekedKey: peek && peeked != null ? peek.read(peeked) : null };
}

/**
 * The token's account and scope, in one statement (the bench sends it through node-postgres,
 * too); `peeked`, a column over the account `a`, is read with them.
 */
export function accountByTokenStatement(tokenHash: string, peeked?: Sql): Sql {
  // The write matches a row once a minute per key; the rest of the time it is a read.
  return sql`
    WITH key AS (
      SELECT t.id, t.account_id, t.scope FROM api_tokens t
       WHERE t.token_hash = ${tokenHash} AND (t.expires_at IS NULL OR t.expires_at > now())
    ), used AS (
      UPDATE api_tokens u SET last_used_at = now() FROM key
       WHERE u.id = key.id AND (u.last_used_at IS NULL OR u.last_used_at < now() - interval '1 minute')
    )
    SELECT a.id::text AS id, a.handle, a.name, key.scope${peeked ? sql`, ${peeked} AS peeked` : empty}
      FROM key JOIN accounts a ON a.id = key.account_id`;
}

/** The customer of a better-auth session cookie: none when tampered with, expired or signed out. */
export async function accountForSession(headers: Headers): Promise<Principal["account"]> {
  try {
    const session = await auth().api.getSession({ headers });
    if (!session) return null;
    const { id, name, email } = session.user;
    const handle = (session.user as { handle?: string | null }).handle ?? email;
    return { id, handle, name };
  } catch (error) {
    // A cookie the library refuses is an anonymous request; a database outage is not.
    if (isAPIError(error)) return null;
    throw error;
  }
}

/**
 * The caller's identity from the request alone: a Bearer token (customer API key or the admin
 * token) or the session cookies. Never from the request body. A Bearer value shaped like an API
 * key is only ever looked up as one (ADMIN_TOKEN cannot have that shape); any other is an admin
 * token attempt, throttled per address.
 */
export async function authenticate(
  prisma: Db,
  headers: Headers,
  secrets: { sessionSecret?: string; adminToken: string },
): Promise<Principal> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    const token = match?.[1];
    if (!token) return ANONYMOUS;
    if (looksLikeApiKey(token)) {
      const key = parseIdempotencyKey(headers.get("idempotency-key"));
      const found = await accountForApiKey(prisma, token, key.ok ? key.key : undefined);
      return found
        ? { account: found.account, isAdmin: false, apiKeyScope: found.scope, peekedKey: found.peekedKey }
        : ANONYMOUS;
    }
    const check = await checkSecretFrom(prisma, token, secrets.adminToken, {
      address: clientAddress(headers),
      channel: "bearer",
    });
    return check.ok
      ? { account: null, isAdmin: true, admin: { actor: "ADMIN_TOKEN (Bearer)", role: "owner" } }
      : ANONYMOUS;
  }
  const cookies = headers.get("cookie");
  if (!cookies) return ANONYMOUS;
  const adminCookie = readCookie(cookies, adminCookieName(env.isProduction));
  const adminSession = adminCookie ? await adminSessionFor(prisma, adminCookie, secrets.adminToken) : null;
  // No session cookie, no session query (the production name has a `__Secure-` prefix).
  const account = cookies.includes(`${SESSION_COOKIE}=`) ? await accountForSession(headers) : null;
  if (!adminSession) return { account, isAdmin: false };
  const { actor, id: sessionId, role, operator } = adminSession;
  return {
    account,
    isAdmin: true,
    admin: { actor, sessionId, role, ...(operator ? { operatorId: operator.id } : {}) },
  };
}
