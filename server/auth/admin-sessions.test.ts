import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";
import { adminCookieName, createAdminSession, endAdminSession, listAdminSessions } from "./admin-sessions";
import { authenticate } from "./authenticate";

// Admin sessions are rows (decision 0063): ended by sign-out, an operator or a new ADMIN_TOKEN.

const address = () => `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`;
const withCookie = (token: string) =>
  new Headers({ cookie: `${adminCookieName(env.isProduction)}=${token}` });
const asAdmin = (headers: Headers) => authenticate(db(), headers, { adminToken: env.ADMIN_TOKEN });
const newSession = (adminToken = env.ADMIN_TOKEN) =>
  createAdminSession(db(), { adminToken, address: "2001:db8::1", userAgent: "test" });

describe("admin sessions", () => {
  it("authenticate the admin until signed out; the cookie holds no more than a random token", async () => {
    const session = await newSession();
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await asAdmin(withCookie(session.token))).toMatchObject({
      isAdmin: true,
      admin: { actor: `session ${session.id}`, sessionId: session.id },
    });
    const row = await db().adminSession.findUniqueOrThrow({ where: { id: session.id } });
    expect(row.tokenHash).not.toContain(session.token);
    expect(await endAdminSession(db(), session.id, "sign-out")).toBe(true);
    expect((await asAdmin(withCookie(session.token))).isAdmin).toBe(false);
  });

  it("end when ADMIN_TOKEN changes, when they expire, and when an operator ends them", async () => {
    const old = await newSession("the-admin-token-before-rotation");
    expect((await asAdmin(withCookie(old.token))).isAdmin).toBe(false);
    const listed = (await listAdminSessions(db(), env.ADMIN_TOKEN, 500)).find((s) => s.id === old.id);
    expect(listed).toMatchObject({ live: false, endedBy: "ADMIN_TOKEN rotated" });

    const expiring = await newSession();
    await db().adminSession.update({
      where: { id: expiring.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await asAdmin(withCookie(expiring.token))).isAdmin).toBe(false);

    // An operator, signed in with a session of their own, ends another one; the audit log says who.
    const operator = await newSession();
    const victim = await newSession();
    const principal = await asAdmin(withCookie(operator.token));
    const caller = createCaller(createContextInner({ principal })).admin;
    expect(await caller.sessions.end({ id: victim.id })).toEqual({ ended: true });
    expect((await asAdmin(withCookie(victim.token))).isAdmin).toBe(false);
    expect((await asAdmin(withCookie(operator.token))).isAdmin).toBe(true);
    const event = (await caller.audit.list()).find((e) => e.subject === `admin session ${victim.id}`);
    expect(event).toMatchObject({
      actor: `session ${operator.id}`,
      action: "sessions.end",
      subject: `admin session ${victim.id}`,
      outcome: "ok",
    });
    await expect(caller.sessions.end({ id: victim.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("the admin token", () => {
  it("keeps working as a Bearer token, and is refused to an address after 10 wrong ones, the right one included", async () => {
    const attacker = address();
    const bearer = (token: string, from: string) =>
      asAdmin(new Headers({ authorization: `Bearer ${token}`, "x-forwarded-for": from }));
    expect(await bearer(env.ADMIN_TOKEN, attacker)).toMatchObject({
      isAdmin: true,
      admin: { actor: "ADMIN_TOKEN (Bearer)" },
    });
    for (let i = 0; i < 10; i++)
      expect((await bearer(`guess-${i}-${randomUUID()}`, attacker)).isAdmin).toBe(false);
    expect((await bearer(env.ADMIN_TOKEN, attacker)).isAdmin).toBe(false);
    // Another address is not affected.
    expect((await bearer(env.ADMIN_TOKEN, address())).isAdmin).toBe(true);
  });
});

describe("the audit log", () => {
  it("records a reconciliation run with who ran it, from where and when", async () => {
    const before = Date.now();
    const from = address();
    const reqHeaders = new Headers({ authorization: `Bearer ${env.ADMIN_TOKEN}`, "x-forwarded-for": from });
    const principal = await asAdmin(reqHeaders);
    const caller = createCaller(createContextInner({ principal, reqHeaders })).admin;
    const report = await caller.reconcile.run({ graceSeconds: 0 });
    const event = (await caller.audit.list()).find((e) => e.address === from);
    expect(event).toMatchObject({
      actor: "ADMIN_TOKEN (Bearer)",
      action: "reconcile.run",
      outcome: `ok: ${report.mismatches.length} mismatches`,
    });
    expect(Date.parse(event?.at ?? "")).toBeGreaterThanOrEqual(before - 1000);
  });
});
