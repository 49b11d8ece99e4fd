// The library's guard, not instanceof: the auth instance on globalThis may be another Next layer's
// copy, and isAPIError also knows its errors by name (docs/decisions/0095).
import { isAPIError } from "better-auth/api";
import { consume, LIMIT_RULES, refund, reset } from "../limits";
import { auth, MIN_PASSWORD_LENGTH } from "./auth";

// Sign-up, sign-in and sign-out for the pages' server actions: better-auth does the accounts,
// passwords and sessions; this adds the abuse limits and the messages a shopper sees.

export const INCORRECT_CREDENTIALS = "Incorrect email or password";

export type AuthOutcome = { ok: true } | { ok: false; message: string; retryAfterSeconds?: number };

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The address the request came from: the last X-Forwarded-For entry, which the server in front
 * (Next's own, or a proxy) appends; earlier entries are whatever the client sent.
 */
export function clientAddress(headers: Headers): string {
  const forwarded = headers.get("x-forwarded-for");
  const last = forwarded?.split(",").at(-1)?.trim();
  return last || headers.get("x-real-ip") || "unknown";
}

function throttled(retryAfterSeconds: number): AuthOutcome {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return {
    ok: false,
    retryAfterSeconds,
    message: `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
  };
}

export async function signIn(
  headers: Headers,
  input: { email: string; password: string },
): Promise<AuthOutcome> {
  const email = normalizeEmail(input.email);
  const address = clientAddress(headers);
  // Every attempt spends a point before the password is checked, in one atomic upsert each, so
  // a burst of parallel guesses cannot slip past the count; a right password gives them back.
  const byEmail = await consume(LIMIT_RULES.signInFailuresByEmail, email);
  if (!byEmail.ok) return throttled(byEmail.retryAfterSeconds);
  const byAddress = await consume(LIMIT_RULES.signInFailuresByAddress, address);
  if (!byAddress.ok) return throttled(byAddress.retryAfterSeconds);
  try {
    await auth().api.signInEmail({ body: { email, password: input.password }, headers });
  } catch (error) {
    if (!isAPIError(error) || error.statusCode >= 500) throw error;
    return { ok: false, message: INCORRECT_CREDENTIALS };
  }
  await reset(LIMIT_RULES.signInFailuresByEmail, email);
  await refund(LIMIT_RULES.signInFailuresByAddress, address);
  return { ok: true };
}

export async function signUp(
  headers: Headers,
  input: { email: string; password: string },
): Promise<AuthOutcome> {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    return { ok: false, message: "Enter a valid email address." };
  if (input.password.length < MIN_PASSWORD_LENGTH)
    return { ok: false, message: `Use a password of at least ${MIN_PASSWORD_LENGTH} characters.` };
  const limit = await consume(LIMIT_RULES.signUpsByAddress, clientAddress(headers));
  if (!limit.ok) return throttled(limit.retryAfterSeconds);
  try {
    await auth().api.signUpEmail({ body: { email, password: input.password, name: email }, headers });
    return { ok: true };
  } catch (error) {
    if (!isAPIError(error) || error.statusCode >= 500) throw error;
    if (error.body?.code?.startsWith("USER_ALREADY_EXISTS"))
      return { ok: false, message: "An account with this email already exists: sign in instead." };
    return { ok: false, message: error.body?.message ?? "Could not create the account." };
  }
}

/** Deletes the session row, so the cookie is worthless even if a copy of it survives. */
export async function signOut(headers: Headers): Promise<void> {
  try {
    await auth().api.signOut({ headers });
  } catch (error) {
    // Signing out without a valid session is already the wanted state.
    if (!isAPIError(error)) throw error;
  }
}
