import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  failedRequirement,
  isRequirementFailure,
  requirement,
  StatementBuilder,
  sql,
} from "@idempotent-checkout/idempotency/sql";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, rawQuery } from "../db";
import { HOUSE_ACCOUNTS_MISSING } from "../ledger";

const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || "";
const MIGRATION = fileURLToPath(import.meta.resolve("@idempotent-checkout/idempotency/migration.sql"));

/** The key tables and statement_require as the catalog describes them, the app's foreign key aside. */
async function describeSchema(client: pg.Client) {
  const tables = ["idempotency_keys", "idempotency_key_events", "idempotency_outcome_counts"];
  const q = async (text: string) => (await client.query(text, [tables])).rows;
  return {
    columns: await q(`SELECT table_name, column_name, data_type, datetime_precision, character_maximum_length,
                             is_nullable, column_default
                        FROM information_schema.columns
                       WHERE table_schema = current_schema() AND table_name = ANY($1) ORDER BY 1, 2`),
    indexes: await q(
      `SELECT tablename, indexname, indexdef FROM pg_indexes
                       WHERE schemaname = current_schema() AND tablename = ANY($1) ORDER BY 1, 2`,
    ),
    constraints: await q(`SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def
                            FROM pg_constraint
                           WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text = ANY($1) AND conname <> 'idempotency_keys_account_id_fkey'
                           ORDER BY 1, 2`),
    requireFunction: (
      await client.query(
        "SELECT pg_get_function_arguments(oid) AS args, prosrc FROM pg_proc WHERE proname = 'statement_require' AND pronamespace = current_schema()::regnamespace",
      )
    ).rows,
  };
}

describe("the package's migration and the app's migrations", () => {
  const name = `keys_schema_${randomBytes(6).toString("hex")}`;
  let app: pg.Client;
  let fresh: pg.Client;
  beforeAll(async () => {
    app = new pg.Client({ connectionString: url });
    await app.connect();
    await app.query(`CREATE DATABASE ${name}`);
    const freshUrl = new URL(url);
    freshUrl.pathname = `/${name}`;
    fresh = new pg.Client({ connectionString: freshUrl.toString() });
    await fresh.connect();
    await fresh.query(readFileSync(MIGRATION, "utf8"));
  });
  afterAll(async () => {
    await fresh?.end();
    await app?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await app?.end();
  });

  it("give the key tables, their indexes and constraints, and statement_require, alike", async () => {
    const [ours, theirs] = [await describeSchema(app), await describeSchema(fresh)];
    expect(theirs.columns.length).toBeGreaterThan(20);
    expect(ours).toEqual(theirs);
  });
});

describe("a failed requirement, by every path the app sends statements on", () => {
  const MISSING = requirement("test.row_missing");
  const failing = () => {
    const b = new StatementBuilder();
    const row = b.cte<"n">(sql`SELECT 1 AS n WHERE false`, "row");
    b.require(sql`EXISTS (SELECT 1 FROM ${row})`, MISSING);
    return b.statement();
  };
  const caught = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error("the statement did not fail");
      },
      (error: unknown) => error,
    );

  it("is read from node-postgres (rawQuery on the shared pool), Prisma, and Prisma's transaction", async () => {
    const s = failing();
    const errors = [
      await caught(rawQuery(db(), s)),
      await caught(db().$queryRawUnsafe(s.text, ...s.values)),
      await caught(db().$transaction((tx) => tx.$queryRawUnsafe(s.text, ...s.values))),
    ];
    expect(errors.map(failedRequirement)).toEqual([
      "test.row_missing",
      "test.row_missing",
      "test.row_missing",
    ]);
    expect(
      errors.every(
        (e) => isRequirementFailure(e, MISSING) && !isRequirementFailure(e, HOUSE_ACCOUNTS_MISSING),
      ),
    ).toBe(true);
  });
});
