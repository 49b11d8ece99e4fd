// The library's guard, not instanceof: the auth instance on globalThis may be another Next layer's
// copy, and isAPIError also knows its errors by name (docs/decisions/0095).
import { isAPIError } from "better-auth/api";
import { type Db, rawQuery } from "../db";
import { Prisma } from "../generated/prisma/client";
import { auth, SESSION_COOKIE } from "./auth";
import { ADMIN_COOKIE, verifySession } from "./session";
import { hashToken, safeEqual } from "./tokens";

export interface Principal {
  account: { id: string; handle: string; name: string } | null;
  isAdmin: boolean;
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
 * The account of a Bearer API key, in one indexed query. Shared by every API surface that takes
 * `Authorization: Bearer sk_…` (tRPC here, the REST API too).
 */
export async function accountForApiKey(prisma: Db, token: string): Promise<Principal["account"]> {
  // A raw join: the ORM's nested select sends two queries (counted by the cost test).
  const [account] = await rawQuery<{ id: string; handle: string; name: string }>(
    prisma,
    accountByTokenStatement(hashToken(token)),
  );
  return account ?? null;
}

/** The token's account, in one statement (the bench sends it through node-postgres, too). */
export function accountByTokenStatement(tokenHash: string): Prisma.Sql {
  return Prisma.sql`
    SELECT a.id::text AS id, a.handle, a.name FROM api_tokens t JOIN accounts a ON a.id = t.account_id
     WHERE t.token_hash = ${tokenHash}`;
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
 * token) or the session cookies. Never from the request body.
 */
export async function authenticate(
  prisma: Db,
  headers: Headers,
  secrets: { sessionSecret: string; adminToken: string },
): Promise<Principal> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    const token = match?.[1];
    if (!token) return ANONYMOUS;
    if (safeEqual(hashToken(token), hashToken(secrets.adminToken))) return { account: null, isAdmin: true };
    return { account: await accountForApiKey(prisma, token), isAdmin: false };
  }
  const cookies = headers.get("cookie");
  if (!cookies) return ANONYMOUS;
  const isAdmin = verifySession(secrets.sessionSecret, "admin", readCookie(cookies, ADMIN_COOKIE)) !== null;
  // No session cookie, no session query (the production name has a `__Secure-` prefix).
  const account = cookies.includes(`${SESSION_COOKIE}=`) ? await accountForSession(headers) : null;
  return { account, isAdmin };
}
