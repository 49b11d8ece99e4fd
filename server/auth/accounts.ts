// The library's guard, not instanceof: the auth instance on globalThis may be another Next layer's
// copy, and isAPIError also knows its errors by name (docs/decisions/0095).
import { isAPIError } from "better-auth/api";
import { db } from "../db";
import { env } from "../env";
import { consume, LIMIT_RULES, refund } from "../limits";
import { auth, MIN_PASSWORD_LENGTH } from "./auth";
import { addressGroup, clientAddress } from "./client-address";
import { DEMO_PASSWORD } from "./demo";
import { isReservedEmail, RESERVED_EMAIL_MESSAGE } from "./reserved";
import { confirmSignInFailure, releaseSignInAttempts, reserveSignInAttempt } from "./sign-in-attempts";

export { FREE_SIGN_IN_FAILURES, signInDelaySeconds } from "./sign-in-attempts";

// Sign-up, sign-in and sign-out for the pages' server actions: better-auth does the accounts,
// passwords and sessions; this adds the abuse limits and the messages a shopper sees.

export const INCORRECT_CREDENTIALS = "Incorrect email or password";
/** The one answer to a sign-up, whether the email was free or not (decision 0065). */
export const SIGN_UP_DONE = "Your account is ready: sign in with your email and password.";

export type AuthOutcome = { ok: true } | { ok: false; message: string; retryAfterSeconds?: number };

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function throttled(retryAfterSeconds: number): AuthOutcome {
  const [n, unit] =
    retryAfterSeconds < 60 ? [retryAfterSeconds, "second"] : [Math.ceil(retryAfterSeconds / 60), "minute"];
  return {
    ok: false,
    retryAfterSeconds,
    message: `Too many attempts. Try again in ${n} ${unit}${n === 1 ? "" : "s"}.`,
  };
}

export async function signIn(
  headers: Headers,
  input: { email: string; password: string },
): Promise<AuthOutcome> {
  const email = normalizeEmail(input.email);
  const address = addressGroup(clientAddress(headers));
  const pair = `${email} ${address}`;
  // Both counts are taken before the password is checked, each in one atomic statement, so a
  // burst of parallel guesses gets exactly the checks a sequence gets (decision 0146); a right
  // password gives them back.
  const byAddress = await consume(LIMIT_RULES.signInFailuresByAddress, address);
  if (!byAddress.ok) return throttled(byAddress.retryAfterSeconds);
  const attempt = await reserveSignInAttempt(db(), pair);
  if (!attempt.ok) {
    // Refused before any check: as if it never reached the address's count.
    await refund(LIMIT_RULES.signInFailuresByAddress, address);
    return throttled(attempt.retryAfterSeconds);
  }
  // The demo password is public: in production it opens nothing, whatever the database holds.
  const refused = env.isProduction && input.password === DEMO_PASSWORD;
  if (refused || !(await passwordAccepted(headers, email, input.password))) {
    await confirmSignInFailure(db(), pair);
    return { ok: false, message: INCORRECT_CREDENTIALS };
  }
  await releaseSignInAttempts(db(), pair);
  await refund(LIMIT_RULES.signInFailuresByAddress, address);
  return { ok: true };
}

/** Signs in (the session cookie is set); false for a wrong email or password. */
async function passwordAccepted(headers: Headers, email: string, password: string): Promise<boolean> {
  try {
    await auth().api.signInEmail({ body: { email, password }, headers });
    return true;
  } catch (error) {
    if (!isAPIError(error) || error.statusCode >= 500) throw error;
    return false;
  }
}

/**
 * Creates the account when the email is free and answers the same when it is not (better-auth's
 * generic answer, with the password hashed either way so the time is alike): nobody learns from
 * sign-up which emails have accounts. It signs nobody in; the shopper signs in next.
 */
export async function signUp(
  headers: Headers,
  input: { email: string; password: string },
): Promise<AuthOutcome> {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    return { ok: false, message: "Enter a valid email address." };
  if (isReservedEmail(email)) return { ok: false, message: RESERVED_EMAIL_MESSAGE };
  if (input.password.length < MIN_PASSWORD_LENGTH)
    return { ok: false, message: `Use a password of at least ${MIN_PASSWORD_LENGTH} characters.` };
  if (env.isProduction && input.password === DEMO_PASSWORD)
    return { ok: false, message: "That password is published in this project's source: choose another." };
  const limit = await consume(LIMIT_RULES.signUpsByAddress, addressGroup(clientAddress(headers)));
  if (!limit.ok) return throttled(limit.retryAfterSeconds);
  try {
    await auth().api.signUpEmail({ body: { email, password: input.password, name: email }, headers });
    return { ok: true };
  } catch (error) {
    if (!isAPIError(error) || error.statusCode >= 500) throw error;
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
