import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  failedRequirement,
  isRequirementFailure,
  REQUIREMENT_SQLSTATE,
  requirement,
  StatementBuilder,
  sql,
} from "./sql.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

const NOTHING_WRITTEN = requirement("test.nothing_written");
const OTHER = requirement("test.other");

describe("StatementBuilder", () => {
  const build = (value: number) => {
    const b = new StatementBuilder();
    const first = b.cte<"n">(sql`SELECT ${value}::int AS n`, "first");
    const second = b.cte<"n">(sql`SELECT n + 1 AS n FROM ${first}`, "second");
    b.require(sql`(SELECT n FROM ${second}) > 0`, NOTHING_WRITTEN);
    return b.statement();
  };

  it("names each part itself, in the order they are added, so the same build gives the same text", () => {
    const a = build(1);
    expect(a.text).toBe(
      "WITH first_1 AS (SELECT $1::int AS n), second_2 AS (SELECT n + 1 AS n FROM first_1) SELECT statement_require((SELECT n FROM second_2) > 0, $2) AS ok",
    );
    expect(a.values).toEqual([1, "test.nothing_written"]);
    expect(build(2).text).toBe(a.text);
  });

  it("refuses a hint or a code that is not a plain name", () => {
    expect(() => new StatementBuilder().cte(sql`SELECT 1`, "x; DROP")).toThrow(TypeError);
    expect(() => requirement("Not A Code")).toThrow(TypeError);
  });
});

describe("a failed requirement, through node-postgres", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  const failure = async (b: StatementBuilder) => {
    const s = b.statement();
    return database.pool.query(s.text, [...s.values]).then(
      () => undefined,
      (error: unknown) => error,
    );
  };

  it("carries SQLSTATE IC001 and its code as the constraint and the detail; the message is not read", async () => {
    const b = new StatementBuilder();
    b.require(sql`true`, OTHER);
    b.require(sql`false`, NOTHING_WRITTEN);
    const error = (await failure(b)) as { code: string; constraint: string; detail: string };
    expect([error.code, error.constraint, error.detail]).toEqual([
      REQUIREMENT_SQLSTATE,
      "test.nothing_written",
      "test.nothing_written",
    ]);
    expect(failedRequirement(error)).toBe("test.nothing_written");
    expect(isRequirementFailure(error, NOTHING_WRITTEN)).toBe(true);
    expect(isRequirementFailure(error, OTHER)).toBe(false);
    // Wrapped by a driver or a framework as the cause: still found.
    expect(isRequirementFailure(new Error("wrapped", { cause: error }), NOTHING_WRITTEN)).toBe(true);
  });

  it("does not take another error for a requirement, whatever its message says", async () => {
    const error = await database.pool
      .query('SELECT 1/0 AS "statement requirement failed: test.nothing_written"')
      .catch((e: unknown) => e);
    expect(failedRequirement(error)).toBeUndefined();
    const raised = await database.pool
      .query("DO $$ BEGIN RAISE EXCEPTION 'statement requirement failed: test.nothing_written'; END $$")
      .catch((e: unknown) => e);
    expect(failedRequirement(raised)).toBeUndefined();
  });

  it("reads the detail when a driver keeps no constraint (Prisma's pg adapter: a DriverAdapterError's cause)", () => {
    const fromPrismaAdapter = {
      name: "DriverAdapterError",
      cause: { kind: "postgres", code: "IC001", severity: "ERROR", message: "m", detail: "test.other" },
    };
    expect(isRequirementFailure(fromPrismaAdapter, OTHER)).toBe(true);
  });
});
