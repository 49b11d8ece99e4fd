import "server-only";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { authenticate } from "../auth/authenticate";
import { ADMIN_COOKIE, sessionCookieOptions, signSession } from "../auth/session";
import { hashToken, safeEqual } from "../auth/tokens";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";

export const ADMIN_SIGN_IN_PATH = "/admin/signin";

/**
 * Compares the submitted token with ADMIN_TOKEN in constant time. Both sides are hashed first so
 * that their lengths are equal and the comparison reveals nothing, not even the token's length.
 */
export function isAdminToken(candidate: string): boolean {
  return safeEqual(hashToken(candidate), hashToken(env.ADMIN_TOKEN));
}

export async function startAdminSession(): Promise<void> {
  (await cookies()).set(
    ADMIN_COOKIE,
    signSession(env.SESSION_SECRET, "admin", "admin"),
    sessionCookieOptions(env.isProduction),
  );
}

export async function endAdminSession(): Promise<void> {
  (await cookies()).delete(ADMIN_COOKIE);
}

/** Whether this request carries the admin session (a customer session never counts). */
export async function hasAdminSession(): Promise<boolean> {
  const principal = await authenticate(db(), await headers(), {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  return principal.isAdmin;
}

/**
 * The admin pages' way to the data: a caller for the admin, or a redirect to the sign-in form.
 * Every admin page and action calls it, since a layout's check does not run on every navigation.
 */
export async function adminCaller() {
  const reqHeaders = await headers();
  const principal = await authenticate(db(), reqHeaders, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  if (!principal.isAdmin) redirect(ADMIN_SIGN_IN_PATH);
  return createCaller(createContextInner({ principal, reqHeaders })).admin;
}
