import { type AddressInfo, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { CONNECTION_LOST, databaseUnavailable } from "./unavailable";

describe("databaseUnavailable", () => {
  it("knows a lost database by SQLSTATE, errno, Prisma code, adapter kind or our brand, also as a cause", () => {
    const coded = (code: string) => Object.assign(new Error("x"), { code });
    for (const code of [
      "08006",
      "08001",
      "57P01",
      "57P03",
      "25006",
      "ECONNREFUSED",
      "ECONNRESET",
      "P1001",
      "P1017",
    ])
      expect(databaseUnavailable(coded(code)), code).toBe(true);
    const prisma = (cause: object) =>
      Object.assign(new Error("Raw query failed"), {
        code: "P2010",
        meta: { driverAdapterError: { cause } },
      });
    expect(databaseUnavailable(prisma({ kind: "postgres", code: "57P01" }))).toBe(true);
    expect(databaseUnavailable(prisma({ kind: "DatabaseNotReachable" }))).toBe(true);
    const branded = Object.defineProperty(new Error("Connection terminated unexpectedly"), CONNECTION_LOST, {
      value: true,
    });
    expect(databaseUnavailable(new Error("wrapped", { cause: branded }))).toBe(true);
  });

  it("leaves every other error alone: a constraint, a bug, a message that merely says so", () => {
    expect(databaseUnavailable(Object.assign(new Error("dup"), { code: "23505" }))).toBe(false);
    expect(
      databaseUnavailable(
        Object.assign(new Error("x"), {
          code: "P2010",
          meta: { driverAdapterError: { cause: { kind: "postgres", code: "40001" } } },
        }),
      ),
    ).toBe(false);
    expect(databaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(false);
    expect(databaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    expect(databaseUnavailable(undefined)).toBe(false);
  });

  it("is what our pools' code-less connection errors carry", async () => {
    // A server that takes the connection and closes it: node-postgres says "Connection
    // terminated unexpectedly", with no code of its own.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const { createPool } = await import("../db");
    const pool = createPool(`postgresql://nobody@127.0.0.1:${port}/none`, 1);
    const cut = await pool.query("SELECT 1").catch((e: unknown) => e);
    await pool.end();
    server.close();
    expect((cut as { code?: unknown }).code).toBeUndefined();
    expect(databaseUnavailable(cut)).toBe(true);
  });
});
