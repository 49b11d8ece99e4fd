import "#server-only";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { recordAdminAction } from "../admin/audit";
import {
  adminCookieName,
  adminCookieOptions,
  adminSessionFor,
  createAdminSession,
  endAdminSession,
} from "../auth/admin-sessions";
import { checkSecretFrom } from "../auth/admin-token";
import { authenticate, type Principal } from "../auth/authenticate";
import { clientAddress } from "../auth/client-address";
import { checkOperatorSignIn, operatorActor } from "../auth/operators";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";

export const ADMIN_SIGN_IN_PATH = "/admin/signin";

export type AdminSignIn = { ok: true } | { ok: false; retryAfterSeconds?: number };

/**
 * The sign-in form: the submitted token against ADMIN_TOKEN (throttled per address), then a
 * session row and its cookie (`__Host-` in production). Recorded in the audit log, a refusal too.
 */
export async function signInAdmin(token: string): Promise<AdminSignIn> {
  const reqHeaders = await headers();
  const address = clientAddress(reqHeaders);
  const check = await checkSecretFrom(db(), token, env.ADMIN_TOKEN, { address, channel: "signin" });
  if (!check.ok) return check;
  const session = await createAdminSession(db(), {
    adminToken: env.ADMIN_TOKEN,
    address,
    userAgent: reqHeaders.get("user-agent"),
  });
  (await cookies()).set(
    adminCookieName(env.isProduction),
    session.token,
    adminCookieOptions(env.isProduction),
  );
  await recordAdminAction(db(), { actor: `session ${session.id}`, address, action: "signin", outcome: "ok" });
  return { ok: true };
}

/**
 * A named operator's sign-in (decision 0200): their email and secret (throttled per address like
 * the token), then a session row of theirs and the same cookie. The audit log names them.
 */
export async function signInOperator(email: string, secret: string): Promise<AdminSignIn> {
  const reqHeaders = await headers();
  const address = clientAddress(reqHeaders);
  const check = await checkOperatorSignIn(db(), email, secret, address);
  if (!check.ok) return check;
  const session = await createAdminSession(db(), {
    adminToken: env.ADMIN_TOKEN,
    address,
    userAgent: reqHeaders.get("user-agent"),
    operatorId: check.operator.id,
  });
  (await cookies()).set(
    adminCookieName(env.isProduction),
    session.token,
    adminCookieOptions(env.isProduction),
  );
  await recordAdminAction(db(), {
    actor: operatorActor(check.operator),
    address,
    action: "signin",
    subject: `admin session ${session.id}`,
    outcome: "ok",
  });
  return { ok: true };
}

/** Ends this browser's session row (a copy of the cookie is then worthless) and clears the cookie. */
export async function signOutAdmin(): Promise<void> {
  const jar = await cookies();
  const name = adminCookieName(env.isProduction);
  const session = await adminSessionFor(db(), jar.get(name)?.value, env.ADMIN_TOKEN);
  if (session && (await endAdminSession(db(), session.id, "sign-out")))
    await recordAdminAction(db(), {
      actor: session.actor,
      address: clientAddress(await headers()),
      action: "signout",
      outcome: "ok",
    });
  // Set, not deleted: a `__Host-` cookie is only replaced by one with the same attributes.
  jar.set(name, "", { ...adminCookieOptions(env.isProduction), maxAge: 0 });
}

/** Whether this request carries a live admin session (a customer session never counts). */
export async function hasAdminSession(): Promise<boolean> {
  const principal = await authenticate(db(), await headers(), { adminToken: env.ADMIN_TOKEN });
  return principal.isAdmin;
}

/** Who is signed in to the console, for what a page shows (the server checks roles again). */
export async function adminPrincipal(): Promise<NonNullable<Principal["admin"]> | null> {
  const principal = await authenticate(db(), await headers(), { adminToken: env.ADMIN_TOKEN });
  return principal.isAdmin ? (principal.admin ?? { actor: "admin", role: "owner" }) : null;
}

/**
 * The admin pages' way to the data: a caller for the admin, or a redirect to the sign-in form.
 * Every admin page and action calls it, since a layout's check does not run on every navigation.
 */
export async function adminCaller() {
  const reqHeaders = await headers();
  const principal = await authenticate(db(), reqHeaders, { adminToken: env.ADMIN_TOKEN });
  if (!principal.isAdmin) redirect(ADMIN_SIGN_IN_PATH);
  return createCaller(createContextInner({ principal, reqHeaders })).admin;
}
