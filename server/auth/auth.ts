import { createHmac } from "node:crypto";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError } from "better-auth/api";
import { nextCookies } from "better-auth/next-js";
import { db } from "../db";
import { env } from "../env";
import { logger } from "../log";
import { betterAuthLogger } from "./auth-logger";
import { isReservedEmail, RESERVED_EMAIL_MESSAGE } from "./reserved";

/** Names the session cookie; production adds the `__Secure-` prefix and the Secure flag. */
export const COOKIE_PREFIX = "checkout";
export const SESSION_COOKIE = `${COOKIE_PREFIX}.session_token`;
export const SESSION_DAYS = 7;
export const MIN_PASSWORD_LENGTH = 10;

/** better-auth gets a key of its own, derived from SESSION_SECRET so production needs no other. */
export function authSecret(sessionSecret: string): string {
  return createHmac("sha256", sessionSecret).update("better-auth session signing").digest("base64url");
}

function createAuth() {
  return betterAuth({
    secret: authSecret(env.SESSION_SECRET),
    database: prismaAdapter(db(), { provider: "postgresql" }),
    // Our Account is better-auth's user; its "account" (a way to sign in) is our Credential.
    user: {
      modelName: "account",
      additionalFields: { handle: { type: "string", required: false, input: false } },
    },
    account: { modelName: "credential", fields: { accountId: "providerAccountId", userId: "ownerId" } },
    session: {
      modelName: "session",
      fields: { userId: "accountId" },
      expiresIn: SESSION_DAYS * 24 * 60 * 60,
      updateAge: 24 * 60 * 60,
    },
    verification: { modelName: "verification" },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: MIN_PASSWORD_LENGTH,
      maxPasswordLength: 128,
      // No session from sign-up: the library then answers an existing email exactly as a new one
      // (decision 0065), and the shopper signs in next.
      autoSignIn: false,
    },
    databaseHooks: {
      user: {
        create: {
          // Orders and the admin show a handle; a new shopper's is their email, unique like it.
          // A reserved address is refused here too, whatever path creates the user (decision 0147).
          before: async (user) => {
            if (isReservedEmail(user.email))
              throw new APIError("BAD_REQUEST", { message: RESERVED_EMAIL_MESSAGE });
            return { data: { ...user, handle: user.email } };
          },
        },
      },
    },
    // Sign-in throttling lives in server/limits (counters in PostgreSQL, shared by instances).
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    // Through the app's pino logger and its redaction.
    logger: betterAuthLogger(logger),
    advanced: {
      cookiePrefix: COOKIE_PREFIX,
      useSecureCookies: env.isProduction,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax" },
      database: { generateId: "uuid" },
    },
    plugins: [nextCookies()],
  });
}

export type Auth = ReturnType<typeof createAuth>;

// One instance per process (Next's dev server reloads modules).
const holder = globalThis as unknown as { auth?: Auth };

export function auth(): Auth {
  holder.auth ??= createAuth();
  return holder.auth;
}

/** The name the session cookie has in this deployment. */
export function sessionCookieName(): string {
  return env.isProduction ? `__Secure-${SESSION_COOKIE}` : SESSION_COOKIE;
}
