import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { ADMIN_COOKIE, CUSTOMER_COOKIE, verifySession } from "./session";
import { hashToken, safeEqual } from "./tokens";

export interface Principal {
  account: { id: string; handle: string; name: string } | null;
  isAdmin: boolean;
}

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/** The token's account, in one statement (the bench sends it through node-postgres, too). */
export function accountByTokenStatement(tokenHash: string): Prisma.Sql {
  return Prisma.sql`
    SELECT a.id::text AS id, a.handle, a.name FROM api_tokens t JOIN accounts a ON a.id = t.account_id
     WHERE t.token_hash = ${tokenHash}`;
}

/**
 * The caller's identity from the request alone: a Bearer token (customer API token or the admin
 * token) or a signed session cookie. Never from the request body.
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
    if (!token) return { account: null, isAdmin: false };
    if (safeEqual(token, secrets.adminToken)) return { account: null, isAdmin: true };
    // One round trip: the token and its account in one join (the ORM's nested select sends two).
    const [account] = await prisma.$queryRaw<{ id: string; handle: string; name: string }[]>(
      accountByTokenStatement(hashToken(token)),
    );
    return { account: account ?? null, isAdmin: false };
  }
  const cookies = headers.get("cookie");
  const isAdmin = verifySession(secrets.sessionSecret, "admin", readCookie(cookies, ADMIN_COOKIE)) !== null;
  const customer = verifySession(secrets.sessionSecret, "customer", readCookie(cookies, CUSTOMER_COOKIE));
  if (!customer) return { account: null, isAdmin };
  const account = await prisma.account.findUnique({
    where: { id: customer.sub },
    select: { id: true, handle: true, name: true },
  });
  return { account, isAdmin };
}
