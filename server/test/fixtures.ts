import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { auth, SESSION_COOKIE } from "../auth/auth";
import { hashToken } from "../auth/tokens";
import { createContextInner } from "../context";
import { db } from "../db";
import type { PaymentProvider } from "../provider";

export interface TestAccount {
  id: string;
  handle: string;
  name: string;
  token: string;
}

/** A fresh account with its own API token, so tests never share state. */
export async function createTestAccount(prefix = "test"): Promise<TestAccount> {
  const handle = `${prefix}_${randomBytes(6).toString("hex")}`;
  const token = `sk_test_${randomBytes(12).toString("hex")}`;
  const account = await db().account.create({
    data: {
      id: randomUUID(),
      handle,
      name: handle,
      email: `${handle}@example.test`,
      apiTokens: { create: { id: randomUUID(), tokenHash: hashToken(token), label: "test" } },
    },
  });
  return { id: account.id, handle, name: account.name, token };
}

/** A context as the HTTP layer would build it for this account and these request headers. */
export function contextFor(
  account: TestAccount | null,
  headers: Record<string, string> = {},
  provider?: PaymentProvider,
) {
  return createContextInner({
    provider,
    principal: {
      account: account && { id: account.id, handle: account.handle, name: account.name },
      isAdmin: false,
    },
    reqHeaders: new Headers(headers),
    resHeaders: new Headers(),
  });
}

/** A session of its own, not the pooler's, for tests that create databases or take session locks. */
export function directTestDatabaseUrl(): string {
  const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is required");
  return url;
}

/** A new, empty database beside the test database (`<prefix>_<random>`): its URL, and how to drop it. */
export async function createScratchDatabase(
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const run = async (statement: string) => {
    const c = new pg.Client({ connectionString: directTestDatabaseUrl() });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE "${name}"`);
  const url = new URL(directTestDatabaseUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A shopper signed up and signed in through better-auth itself, and the session cookie it was given. */
export async function createTestSession(): Promise<{ cookie: string; email: string }> {
  const email = `session-${randomBytes(6).toString("hex")}@example.test`;
  const password = "a long enough password";
  // Sign-up signs nobody in (decision 0065): the session comes from signing in.
  await auth().api.signUpEmail({ body: { email, password, name: email } });
  const { headers } = await auth().api.signInEmail({ body: { email, password }, returnHeaders: true });
  const match = new RegExp(`${SESSION_COOKIE.replace(".", "\\.")}=([^;]+)`).exec(
    headers.get("set-cookie") ?? "",
  );
  if (!match?.[1]) throw new Error(`no session cookie in ${headers.get("set-cookie")}`);
  return { cookie: `${SESSION_COOKIE}=${match[1]}`, email };
}
