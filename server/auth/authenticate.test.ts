import { describe, expect, it } from "vitest";
import { db } from "../db";
import { handleTrpcRequest } from "../http/trpc-handler";
import { createTestSession } from "../test/fixtures";
import { auth, SESSION_COOKIE } from "./auth";

// Sessions come from better-auth itself (a real sign-up), checked through the tRPC HTTP edge.
const newSession = createTestSession;

async function me(cookie: string) {
  const res = await handleTrpcRequest(
    new Request("http://127.0.0.1/api/trpc/account.me", { headers: { cookie } }),
  );
  return { status: res.status, body: await res.json() };
}

describe("customer sessions", () => {
  it("authenticate the account they were made for", async () => {
    const { cookie, email } = await newSession();
    const answer = await me(cookie);
    expect(answer.status).toBe(200);
    expect(answer.body.result.data).toMatchObject({ handle: email, name: email });
  });

  it("are refused when tampered with", async () => {
    const { cookie } = await newSession();
    const last = cookie.at(-1) === "A" ? "B" : "A";
    expect((await me(`${cookie.slice(0, -1)}${last}`)).status).toBe(401);
    // Another token under a valid-looking signature.
    const [name, value] = cookie.split("=") as [string, string];
    expect((await me(`${name}=x${value}`)).status).toBe(401);
  });

  it("are refused once expired", async () => {
    const { cookie, email } = await newSession();
    await db().session.updateMany({
      where: { account: { email } },
      data: { expiresAt: new Date(Date.now() - 60_000) },
    });
    expect((await me(cookie)).status).toBe(401);
  });

  it("end on the server when signed out", async () => {
    const { cookie, email } = await newSession();
    await auth().api.signOut({ headers: new Headers({ cookie }) });
    expect(await db().session.count({ where: { account: { email } } })).toBe(0);
    expect((await me(cookie)).status).toBe(401);
  });

  it("answer a malformed cookie value with 401, not 500", async () => {
    for (const cookie of [
      `${SESSION_COOKIE}=%E0%A4%A`,
      `${SESSION_COOKIE}=%`,
      "checkout_admin=%zz",
      `${SESSION_COOKIE}=${"a".repeat(5000)}`,
      "=; ;;=%",
    ]) {
      expect((await me(cookie)).status, cookie).toBe(401);
    }
  });
});
