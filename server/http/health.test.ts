import { expect, it } from "vitest";
import { createPrismaClient } from "../db";
import { checkHealth } from "./health";

it("is ok when the database answers", async () => {
  expect(await checkHealth()).toEqual({ status: "ok", database: "up" });
});

it("is unavailable when the database does not answer", async () => {
  const unreachable = createPrismaClient("postgresql://postgres@127.0.0.1:1/nowhere");
  const health = await checkHealth(unreachable);
  expect([health.status, health.database]).toEqual(["unavailable", "down"]);
  await unreachable.$disconnect();
});
