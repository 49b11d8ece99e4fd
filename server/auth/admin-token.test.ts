import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { db } from "../db";
import { LIMIT_RULES, reset } from "../limits";
import { logger } from "../log";
import { checkSecretFrom } from "./admin-token";

const SECRET = randomBytes(32).toString("base64url");
const BUDGET = LIMIT_RULES.adminTokenFailuresByAddress.points;

/** A documentation-range IPv4 address of its own per test, so reruns on one database start clean. */
function anyAddress(): string {
  const [a = 0, b = 0] = randomBytes(2);
  return `198.51.${a}.${b}`;
}

const guess = (address: string, i: number) =>
  checkSecretFrom(db(), `wrong-${i}`, SECRET, { address, channel: "bearer" });

function tally(checks: { ok: boolean; retryAfterSeconds?: number }[]) {
  return {
    compared: checks.filter((c) => !c.ok && c.retryAfterSeconds === undefined).length,
    throttled: checks.filter((c) => !c.ok && c.retryAfterSeconds !== undefined).length,
  };
}

describe("the admin and metrics token throttle", () => {
  it("gives 40 parallel wrong tokens exactly the ten a sequence gets, then refuses the right one", async () => {
    const sequence = anyAddress();
    const sequential = [];
    for (let i = 0; i < 40; i++) sequential.push(await guess(sequence, i));
    const burst = anyAddress();
    const parallel = await Promise.all(Array.from({ length: 40 }, (_, i) => guess(burst, i)));
    expect(tally(sequential)).toEqual({ compared: BUDGET, throttled: 40 - BUDGET });
    expect(tally(parallel)).toEqual({ compared: BUDGET, throttled: 40 - BUDGET });
    expect(await checkSecretFrom(db(), SECRET, SECRET, { address: burst, channel: "bearer" })).toMatchObject({
      ok: false,
      retryAfterSeconds: expect.any(Number),
    });
  });

  it("costs nothing when right, and matches any of several secrets (the metrics and the admin token)", async () => {
    const address = anyAddress();
    const metrics = randomBytes(32).toString("base64url");
    for (let i = 0; i < BUDGET + 5; i++)
      expect(
        await checkSecretFrom(db(), metrics, [undefined, metrics, SECRET], { address, channel: "metrics" }),
      ).toEqual({ ok: true });
    expect(tally(await Promise.all(Array.from({ length: 12 }, (_, i) => guess(address, i))))).toEqual({
      compared: BUDGET,
      throttled: 2,
    });
  });

  it("never refuses parallel calls with the right token for each other, even with nine wrong ones counted", async () => {
    const address = anyAddress();
    for (let i = 0; i < BUDGET - 1; i++) await guess(address, i);
    const right = await Promise.all(
      Array.from({ length: 20 }, () => checkSecretFrom(db(), SECRET, SECRET, { address, channel: "bearer" })),
    );
    expect(right).toEqual(Array(20).fill({ ok: true }));
  });

  it("counts an IPv6 client by its /64", async () => {
    const [a = 0, b = 0] = randomBytes(2);
    const block = `2001:db8:${a.toString(16)}:${b.toString(16)}`;
    const checks = [];
    for (let i = 0; i < BUDGET + 1; i++) checks.push(await guess(`${block}:${i.toString(16)}::${i + 1}`, i));
    expect(tally(checks)).toEqual({ compared: BUDGET, throttled: 1 });
  });

  it("writes refusals to the audit log with the address, capped per address, and warns at the first throttle", async () => {
    // The log's cap in all is shared by every test on this database within 15 minutes: start it afresh.
    await reset(LIMIT_RULES.auditedRefusals, "all");
    const warn = vi.spyOn(logger, "warn");
    const address = anyAddress();
    for (let i = 0; i < 40; i++)
      await checkSecretFrom(db(), `wrong-${i}`, SECRET, { address, channel: "signin" });
    const rows = await db().adminAuditEvent.findMany({ where: { address }, orderBy: { at: "asc" } });
    // Ten wrong tokens, then throttled tries until the per-address cap of the audit log.
    expect(rows).toHaveLength(LIMIT_RULES.auditedRefusalsByAddress.points);
    expect(rows.map((r) => r.outcome)).toEqual([
      ...Array(BUDGET).fill("wrong token"),
      ...Array(LIMIT_RULES.auditedRefusalsByAddress.points - BUDGET).fill("throttled"),
    ]);
    expect(new Set(rows.map((r) => `${r.actor} ${r.action}`))).toEqual(new Set(["anonymous refused signin"]));
    const warnings = warn.mock.calls.filter(
      ([fields]) => (fields as { address?: string }).address === address,
    );
    expect(warnings).toHaveLength(1);
    warn.mockRestore();
  });
});
