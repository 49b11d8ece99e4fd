import { describe, expect, it } from "vitest";
import { db } from "../db";
import { handleTrpcRequest } from "../http/trpc-handler";
import { createTestSession } from "../test/fixtures";

// API keys through the tRPC HTTP edge, as a client sends them: managed from a cookie session,
// used as Bearer tokens with the scope they were given (decision 0062).

async function call(path: string, headers: Record<string, string>, input?: unknown) {
  const res = await handleTrpcRequest(
    new Request(`http://127.0.0.1/api/trpc/${path}`, {
      method: input === undefined ? "GET" : "POST",
      // Same-origin, as a browser sends it (a cookie-authenticated mutation needs it).
      headers: { "content-type": "application/json", origin: "http://127.0.0.1", ...headers },
      ...(input === undefined ? {} : { body: JSON.stringify(input) }),
    }),
  );
  return { status: res.status, body: await res.json() };
}

async function keyFor(cookie: string, input: Record<string, unknown>) {
  const made = await call("account.apiKeys.create", { cookie }, input);
  expect(made.status).toBe(200);
  return made.body.result.data as {
    secret: string;
    key: { id: string; scope: string; expiresAt: string | null; lastUsedAt: string | null };
  };
}

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const anOrder = { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] };

describe("API keys", () => {
  it("cannot list, create or revoke keys: only a signed-in session can", async () => {
    const { cookie } = await createTestSession();
    const { secret, key } = await keyFor(cookie, { label: "leaked" });
    expect((await call("account.apiKeys.list", bearer(secret))).status).toBe(403);
    expect((await call("account.apiKeys.create", bearer(secret), { label: "minted" })).status).toBe(403);
    expect((await call("account.apiKeys.revoke", bearer(secret), { id: key.id })).status).toBe(403);
    const listed = await call("account.apiKeys.list", { cookie });
    expect(listed.body.result.data.map((k: { label: string }) => k.label)).toEqual(["leaked"]);
    // The key itself still works for what keys are for.
    expect((await call("account.me", bearer(secret))).status).toBe(200);
  });

  it("carry a label, a scope, created and last-used times; a test key outside production", async () => {
    const { cookie } = await createTestSession();
    const { secret, key } = await keyFor(cookie, { label: "order sync" });
    expect(secret).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ scope: "payments", expiresAt: null, lastUsedAt: null });
    expect((await call("orders.create", bearer(secret), anOrder)).status).toBe(200);
    const [listed] = (await call("account.apiKeys.list", { cookie })).body.result.data;
    expect(listed).toMatchObject({ label: "order sync", scope: "payments" });
    expect(Date.now() - Date.parse(listed.lastUsedAt)).toBeLessThan(60_000);
    expect(Date.parse(listed.createdAt)).toBeLessThanOrEqual(Date.parse(listed.lastUsedAt));
  });

  it("read-only keys read and change nothing (403)", async () => {
    const { cookie } = await createTestSession();
    const { secret } = await keyFor(cookie, { label: "dashboard", scope: "read_only" });
    expect((await call("account.me", bearer(secret))).status).toBe(200);
    const refused = await call("orders.create", bearer(secret), anOrder);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe("This API key is read-only.");
  });

  it("stop working when they expire", async () => {
    const { cookie } = await createTestSession();
    const { secret, key } = await keyFor(cookie, { label: "short", expiresInDays: 1 });
    expect(Date.parse(key.expiresAt ?? "") - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect((await call("account.me", bearer(secret))).status).toBe(200);
    await db().apiToken.update({ where: { id: key.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await call("account.me", bearer(secret))).status).toBe(401);
  });

  it("refuse a scope that does not exist", async () => {
    const { cookie } = await createTestSession();
    expect((await call("account.apiKeys.create", { cookie }, { label: "x", scope: "admin" })).status).toBe(
      400,
    );
  });
});
