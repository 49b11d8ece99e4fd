import { hmac, safeEqual } from "./tokens";

export const ADMIN_COOKIE = "checkout_admin";
const MAX_AGE_SECONDS = 60 * 60 * 24 * 7;

export type SessionRole = "customer" | "admin";
interface SessionPayload {
  role: SessionRole;
  sub: string;
  exp: number;
}

/** A signed, self-contained session (the admin's; customers have better-auth sessions): `<payload>.<hmac>`; tampering or expiry makes it invalid. */
export function signSession(secret: string, role: SessionRole, sub: string, now = Date.now()): string {
  const payload: SessionPayload = { role, sub, exp: Math.floor(now / 1000) + MAX_AGE_SECONDS };
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${body}.${hmac(secret, `${role}.${body}`)}`;
}

export function verifySession(
  secret: string,
  role: SessionRole,
  value: string | undefined,
  now = Date.now(),
) {
  if (!value) return null;
  const [body, signature, extra] = value.split(".");
  if (!body || !signature || extra !== undefined) return null;
  if (!safeEqual(signature, hmac(secret, `${role}.${body}`))) return null;
  try {
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as SessionPayload;
    if (payload.role !== role || typeof payload.sub !== "string" || payload.exp * 1000 < now) return null;
    return payload;
  } catch {
    return null;
  }
}

export function sessionCookieOptions(secure: boolean) {
  return { httpOnly: true, sameSite: "lax" as const, secure, path: "/", maxAge: MAX_AGE_SECONDS };
}
