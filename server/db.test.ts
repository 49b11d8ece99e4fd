import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, vi } from "vitest";
import { createContextInner } from "./context";
import {
  closeClient,
  createPool,
  createPrismaClient,
  createServerClient,
  db,
  rawQuery,
  statementNames,
} from "./db";
import { Prisma } from "./generated/prisma/client";
import { logger } from "./log";
import { createCaller } from "./root";
import { directTestDatabaseUrl } from "./test/fixtures";
import { createTestOrder } from "./test/payments";
import { it } from "./test/vitest";

describe("statementNames", () => {
  it("names a statement after its text, and stops naming new texts past its bound", () => {
    const name = statementNames(2);
    expect(name({ sql: "SELECT 1" })).toMatch(/^s_[\w-]+$/);
    expect(name({ sql: "SELECT 1" })).toBe(name({ sql: "SELECT 1" }));
    expect(name({ sql: "SELECT 2" })).not.toBe(name({ sql: "SELECT 1" }));
    // The third text is past the bound: unnamed, so parsed and planned on every call.
    expect(name({ sql: "SELECT 3" })).toBe("");
    expect(name({ sql: "SELECT 2" })).toMatch(/^s_/);
  });
});

describe("rawQuery", () => {
  it("answers what $queryRaw answers, int8 as bigint included, through the client's own pool", async () => {
    const statement = Prisma.sql`
      SELECT ${"a"}::text AS t, 42::int AS i, 9007199254740993::int8 AS big, '{"x":[1]}'::json AS j,
             true AS b, NULL::text AS n, now() >= '2000-01-01'::timestamptz AS recent`;
    const direct = await rawQuery<Record<string, unknown>>(db(), statement);
    expect(direct).toEqual(await db().$queryRaw<Record<string, unknown>[]>(statement));
    expect(direct[0]?.big).toBe(9007199254740993n);
  });

  it("goes past the ORM from another copy of this module too (Next bundles instrumentation apart)", async () => {
    const client = createPrismaClient(directTestDatabaseUrl());
    vi.resetModules();
    const copy = (await import("./db")) as typeof import("./db");
    expect(copy.rawQuery).not.toBe(rawQuery);
    const viaOrm = vi.spyOn(client, "$queryRaw");
    try {
      expect(await copy.rawQuery(client, Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
      expect(viaOrm).not.toHaveBeenCalled();
    } finally {
      await client.$disconnect();
    }
  });
});

describe("the server's pool", () => {
  // Reopened connections cost a fork and fresh plans per statement (decision 0047).
  it("keeps its spare connections past pg-pool's default idle timeout (10 s)", async () => {
    // As db() builds it, on a direct connection: behind PgBouncer the backends outlive the pool's.
    const client = createServerClient(directTestDatabaseUrl());
    const backends = async () => {
      const answers = await Promise.all(
        [1, 2, 3].map(() =>
          rawQuery<{ pid: number }>(client, Prisma.sql`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`),
        ),
      );
      return answers.map((rows) => rows[0]?.pid).sort();
    };
    try {
      const before = await backends();
      expect(new Set(before).size).toBe(3);
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      expect(await backends()).toEqual(before);
    } finally {
      await closeClient(client);
    }
  });

  it("logs a connection the server ended (a shutdown, a restart) as information, not as a failure", async () => {
    const pool = createPool(directTestDatabaseUrl(), 1);
    const info = vi.spyOn(logger, "info");
    const warn = vi.spyOn(logger, "warn");
    const admin = new pg.Client({ connectionString: directTestDatabaseUrl() });
    try {
      const { pid } = (await pool.query("SELECT pg_backend_pid() AS pid")).rows[0];
      await admin.connect();
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await vi.waitFor(() =>
        expect(info).toHaveBeenCalledWith({ code: "57P01" }, "database closed a pooled connection"),
      );
      expect(warn).not.toHaveBeenCalled();
    } finally {
      info.mockRestore();
      warn.mockRestore();
      await admin.end();
      await pool.end();
    }
  });
});

// CI runs the suite through PgBouncer 1.18 with prepared statements off; this test keeps the
// prepared path (DATABASE_PREPARED_STATEMENTS=on, a direct connection) honest.
it("with prepared statements, a payment and its replay run on statements prepared once per connection", async ({
  provider,
  account,
}) => {
  const prisma = createPrismaClient(directTestDatabaseUrl(), { preparedStatements: true });
  try {
    const order = await createTestOrder(account);
    const key = randomUUID();
    const create = () =>
      createCaller(
        createContextInner({
          prisma,
          provider: provider.client,
          principal: {
            account: { id: account.id, handle: account.handle, name: account.name },
            isAdmin: false,
          },
          reqHeaders: new Headers({ "idempotency-key": key }),
        }),
      ).payments.create({ orderId: order.id, paymentMethod: "pm_card_visa" });
    const first = await create();
    expect(first.status).toBe("succeeded");
    expect(await create()).toEqual(first);

    // One transaction is one connection: the statement run twice was prepared once, by name.
    const prepared = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 AS one`;
      await tx.$queryRaw`SELECT 1 AS one`;
      return tx.$queryRaw<{ name: string }[]>`
        SELECT name FROM pg_prepared_statements WHERE statement = ${"SELECT 1 AS one"}`;
    });
    expect(prepared).toHaveLength(1);
    expect(prepared[0]?.name).toMatch(/^s_/);
  } finally {
    await prisma.$disconnect();
  }
});
