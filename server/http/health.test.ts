import { expect, it, vi } from "vitest";
import { createPrismaClient } from "../db";
import { logger } from "../log";
import { checkLiveness, checkReadiness, healthResponse } from "./health";

it("liveness answers 200 without asking the database", async () => {
  const res = healthResponse(checkLiveness());
  expect([res.status, await res.json()]).toEqual([200, { status: "ok" }]);
});

it("readiness is 200 when the database answers", async () => {
  const res = healthResponse(await checkReadiness());
  expect([res.status, await res.json()]).toEqual([200, { status: "ok", database: "up" }]);
});

it("readiness is 503 when the database does not answer: the cause is logged, not answered", async () => {
  const warn = vi.spyOn(logger, "warn").mockImplementation(() => {});
  const unreachable = createPrismaClient("postgresql://secretuser@127.0.0.1:1/nowhere");
  try {
    const res = healthResponse(await checkReadiness(unreachable));
    const text = await res.text();
    expect([res.status, JSON.parse(text)]).toEqual([503, { status: "unavailable", database: "down" }]);
    expect(text).not.toMatch(/secretuser|nowhere|127\.0\.0\.1|ECONNREFUSED|reach/i);
    expect(JSON.stringify(warn.mock.calls)).toMatch(/reach database server at 127\.0\.0\.1:1/);
  } finally {
    warn.mockRestore();
    await unreachable.$disconnect();
  }
});
