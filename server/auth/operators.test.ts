import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";
import { adminCookieName, adminSessionFor, createAdminSession, listAdminSessions } from "./admin-sessions";
import { authenticate } from "./authenticate";
import { checkOperatorSignIn } from "./operators";
import type { AdminRole } from "./roles";

// Named operators with roles (decision 0200): invited by an owner, named in the audit log for
// what they do and what they are refused, and signed out at once when removed.

const address = () => `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::7`;
const withCookie = (token: string) =>
  new Headers({ cookie: `${adminCookieName(env.isProduction)}=${token}` });
const principalOf = (token: string) => authenticate(db(), withCookie(token), { adminToken: env.ADMIN_TOKEN });
const tokenOwner = () =>
  createCaller(
    createContextInner({
      principal: { account: null, isAdmin: true, admin: { actor: "ADMIN_TOKEN (Bearer)" } },
    }),
  ).admin;

async function invite(role: AdminRole, name = `Person ${randomUUID().slice(0, 8)}`) {
  const email = `${name.toLowerCase().replace(/\W+/g, ".")}@ops.example`;
  const { operator, secret } = await tokenOwner().operators.invite({ email, name, role });
  const from = address();
  const check = await checkOperatorSignIn(db(), email, secret, from);
  if (!check.ok) throw new Error("sign-in refused");
  const session = await createAdminSession(db(), {
    adminToken: env.ADMIN_TOKEN,
    address: from,
    userAgent: "test",
    operatorId: check.operator.id,
  });
  const principal = await principalOf(session.token);
  const key = randomUUID();
  const caller = createCaller(
    createContextInner({ principal, reqHeaders: new Headers({ "idempotency-key": key }) }),
  ).admin;
  return { operator, secret, session, principal, caller, email, name, key };
}

const auditOf = async (actor: string) =>
  db().adminAuditEvent.findMany({ where: { actor }, orderBy: { at: "asc" } });

describe("operators", () => {
  it("sign in with their email and the secret shown once, and act under their own name", async () => {
    const name = `Ada Lovelace ${randomUUID().slice(0, 6)}`;
    const op = await invite("operator", name);
    expect(op.secret).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
    const row = await db().operator.findUniqueOrThrow({ where: { id: op.operator.id } });
    expect(row.secretHash).not.toContain(op.secret.slice(3));
    const actor = `${name} <${op.email}>`;
    expect(op.principal).toMatchObject({
      isAdmin: true,
      admin: { actor, role: "operator", operatorId: row.id },
    });
    expect((await checkOperatorSignIn(db(), op.email, `${op.secret}x`, address())).ok).toBe(false);

    await expect(
      op.caller.reconcile.resolve({ id: "999999999", note: "settled by phone" }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await auditOf(actor)).map((e) => `${e.action} ${e.outcome}`)).toContain(
      "reconcile.resolve failed: NOT_FOUND",
    );
    const invited = await db().adminAuditEvent.findFirstOrThrow({
      where: { action: "operators.invite", subject: `operator ${op.email} as operator` },
    });
    expect(invited).toMatchObject({ actor: "ADMIN_TOKEN (Bearer)", outcome: "ok" });
  });

  it("refuse a viewer's refund, capture, re-drive and reconciliation on the server, naming the viewer", async () => {
    const viewer = await invite("viewer");
    const actor = `${viewer.name} <${viewer.email}>`;
    const paymentId = randomUUID();
    await expect(
      viewer.caller.refunds.create({ paymentId, amountMinor: 100, reason: "asked" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(viewer.caller.payments.capture({ id: paymentId })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(viewer.caller.keys.redrive({ id: "1" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(viewer.caller.reconcile.run({})).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      viewer.caller.operators.invite({ email: "x@ops.example", name: "X", role: "owner" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const refusals = await auditOf(actor);
    expect(refusals.map((e) => `${e.action} ${e.subject} ${e.outcome}`)).toEqual([
      "refused procedure admin.refunds.create failed: FORBIDDEN (needs operator)",
      "refused procedure admin.payments.capture failed: FORBIDDEN (needs operator)",
      "refused procedure admin.keys.redrive failed: FORBIDDEN (needs operator)",
      "refused procedure admin.reconcile.run failed: FORBIDDEN (needs operator)",
      "refused procedure admin.operators.invite failed: FORBIDDEN (needs owner)",
    ]);
    // Reads are a viewer's to do; no key was claimed for the refused refund.
    expect(Array.isArray(await viewer.caller.audit.list())).toBe(true);
    expect(await db().idempotencyKey.count({ where: { key: viewer.key } })).toBe(0);
  });

  it("end every session of a removed operator at once; the email can be invited again", async () => {
    const owner = await invite("owner");
    const leaving = await invite("operator");
    const second = await createAdminSession(db(), {
      adminToken: env.ADMIN_TOKEN,
      address: address(),
      userAgent: "phone",
      operatorId: leaving.operator.id,
    });
    expect((await owner.caller.operators.list()).find((o) => o.id === leaving.operator.id)).toMatchObject({
      liveSessions: 2,
      removedAt: null,
    });
    // Not an owner: cannot remove; an owner cannot remove themselves.
    await expect(leaving.caller.operators.remove({ id: owner.operator.id })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(owner.caller.operators.remove({ id: owner.operator.id })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });

    expect(await owner.caller.operators.remove({ id: leaving.operator.id })).toEqual({ removed: true });
    expect((await principalOf(leaving.session.token)).isAdmin).toBe(false);
    expect((await principalOf(second.token)).isAdmin).toBe(false);
    expect((await checkOperatorSignIn(db(), leaving.email, leaving.secret, address())).ok).toBe(false);
    const ended = (await listAdminSessions(db(), env.ADMIN_TOKEN, 500)).filter(
      (s) => s.operatorId === leaving.operator.id,
    );
    expect(ended.map((s) => [s.live, s.endedBy])).toEqual([
      [false, `operator removed by ${owner.name} <${owner.email}>`],
      [false, `operator removed by ${owner.name} <${owner.email}>`],
    ]);
    await expect(
      tokenOwner().operators.invite({ email: owner.email, name: "Twin", role: "viewer" }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const back = await tokenOwner().operators.invite({
      email: leaving.email,
      name: leaving.name,
      role: "viewer",
    });
    expect(back.operator).toMatchObject({ id: leaving.operator.id, role: "viewer", removedAt: null });
    expect((await principalOf(leaving.session.token)).isAdmin).toBe(false);
  });

  it("keep their sessions when ADMIN_TOKEN rotates; a role change applies to the next request", async () => {
    const op = await invite("operator");
    expect(await adminSessionFor(db(), op.session.token, "a-rotated-admin-token-0123456789")).toMatchObject({
      role: "operator",
    });
    await tokenOwner().operators.setRole({ id: op.operator.id, role: "viewer" });
    expect((await principalOf(op.session.token)).admin?.role).toBe("viewer");
  });

  it("let only an owner end another person's session", async () => {
    const a = await invite("operator");
    const b = await invite("viewer");
    await expect(a.caller.sessions.end({ id: b.session.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await b.caller.sessions.end({ id: b.session.id })).toEqual({ ended: true });
    expect((await principalOf(b.session.token)).isAdmin).toBe(false);
  });
});
