import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDrift } from "../test/schema-drift/schema-drift";
import { applyMigrations } from "./migrate";

const root = fileURLToPath(new URL("../..", import.meta.url));
const migrationsDir = path.join(root, "prisma", "migrations");
const schemaText = readFileSync(path.join(root, "prisma", "schema.prisma"), "utf8");
const fixtures = path.join(root, "server", "test", "schema-drift", "__fixtures__");
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl)
  throw new Error(
    "DATABASE_URL must point at a PostgreSQL server, e.g. postgresql://postgres@127.0.0.1:5432/postgres",
  );

const databases: string[] = [];
const tempDirs: string[] = [];

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database with a random name; dropped in afterAll. */
async function tempDatabase(): Promise<string> {
  const name = `migtest_${randomBytes(6).toString("hex")}`;
  await withClient(adminUrl as string, (c) => c.query(`CREATE DATABASE "${name}"`));
  databases.push(name);
  const url = new URL(adminUrl as string);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A migrations folder in the temp dir: { folderName: sql }. */
function tempMigrations(migrations: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-"));
  tempDirs.push(dir);
  for (const [name, sql] of Object.entries(migrations)) writeMigration(dir, name, sql);
  return dir;
}

function writeMigration(dir: string, name: string, sql: string) {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, "migration.sql"), sql);
}

const rowsOf = (url: string) =>
  withClient(url, async (c) => {
    const { rows } = await c.query(
      "SELECT migration_name, checksum, finished_at, rolled_back_at, logs, applied_steps_count FROM _prisma_migrations ORDER BY migration_name",
    );
    return rows;
  });

const tableExists = (url: string, table: string) =>
  withClient(url, async (c) => (await c.query("SELECT to_regclass($1) AS t", [table])).rows[0]?.t !== null);

/** Applies a textual change and fails loudly if it no longer matches (so a test cannot go vacuous). */
function mutate(text: string, from: RegExp, to: string): string {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`mutation ${from} no longer applies; update the test`);
  return out;
}

afterAll(async () => {
  await withClient(adminUrl, async (c) => {
    for (const name of databases) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe("prisma/migrations against prisma/schema.prisma", () => {
  let url = "";
  beforeAll(async () => {
    url = await tempDatabase();
    await applyMigrations(url, { migrationsDir });
  });

  it("produce exactly the declared schema", async () => {
    expect(await findDrift(url, schemaText)).toEqual([]);
  });

  // Proof that the check can fail: the same database against deliberately altered schemas.
  it.each([
    [
      "an extra field",
      /(model Account \{\n)/,
      "$1  nickname String?\n",
      /column "accounts"\."nickname" is in schema\.prisma but not in the database/,
    ],
    [
      "a changed type",
      /priceMinor(\s+)Int/,
      "priceMinor$1BigInt",
      /"products"\."price_minor": type is integer in the database, schema\.prisma says bigint/,
    ],
    [
      "a missing @unique",
      /(handle\s+String\s+)@unique/,
      "$1",
      /index "accounts_handle_key" is in the database but not in schema\.prisma/,
    ],
    [
      "a changed native type",
      /@db\.Char\(3\)/,
      "@db.Char(4)",
      /type is character\(3\) in the database, schema\.prisma says character\(4\)/,
    ],
    [
      "a changed onDelete",
      /onDelete: Cascade/,
      "onDelete: Restrict",
      /foreign key "\w+_fkey": .*ON DELETE CASCADE.*says .*ON DELETE RESTRICT/,
    ],
    [
      "an optional field",
      /(\bname\s+String)(\s)/,
      "$1?$2",
      /"accounts"\."name": NOT NULL in the database, nullable in schema\.prisma/,
    ],
    [
      "a removed default",
      /(createdAt\s+DateTime\s+)@default\(now\(\)\) /,
      "$1",
      /"accounts"\."created_at": default is CURRENT_TIMESTAMP in the database, schema\.prisma says none/,
    ],
    [
      "a removed model",
      /model Product \{[\s\S]*?\n\}\n?/,
      "",
      /table "products" is in the database but not in schema\.prisma/,
    ],
  ])("reports %s", async (_label, from, to, expected) => {
    const drift = await findDrift(url, mutate(schemaText, from, to));
    expect(drift.join("\n")).toMatch(expected);
  });
});

describe("drift check on a wider fixture (enums, Json, BigInt, m:n, composite keys, raw-SQL extras)", () => {
  const fixtureSchema = readFileSync(path.join(fixtures, "drift-fixture.prisma"), "utf8");
  let url = "";
  beforeAll(async () => {
    url = await tempDatabase();
    await applyMigrations(url, { migrationsDir: path.join(fixtures, "drift-migrations") });
  });

  it("finds no drift, and ignores CHECK constraints, triggers, functions, partial and expression indexes", async () => {
    expect(await findDrift(url, fixtureSchema)).toEqual([]);
  });

  it.each([
    [
      "a renamed enum value",
      /PAID(\s+)@map\("paid"\)/,
      'PAID$1@map("settled")',
      /enum "order_status": values are \[PENDING, paid\]/,
    ],
    [
      "a changed enum default",
      /@default\(PENDING\)/,
      "@default(PAID)",
      /"orders"\."status": default is 'PENDING'::order_status/,
    ],
    [
      "a changed Json default",
      /@default\("\{\}"\)/,
      '@default("[]")',
      /"orders"\."payload": default is '\{\}'::jsonb/,
    ],
    [
      "an Int widened to BigInt",
      /retries(\s+)Int /,
      "retries$1BigInt ",
      /"orders"\."retries": type is integer in the database, schema\.prisma says bigint/,
    ],
    [
      "a changed sort order",
      /updatedAt\(sort: Desc\)/,
      "updatedAt",
      /index "orders_status_updated_at_idx": database has .*"updated_at" DESC/,
    ],
    [
      "a changed index type",
      /\(ops: JsonbPathOps\)\], type: Gin/,
      "], type: Hash",
      /index "orders_payload_idx": database has INDEX USING gin .*says INDEX USING hash/,
    ],
    [
      "a dropped FK map name",
      /, map: "orders_parent_fk"/,
      "",
      /foreign key "orders_parent_id_fkey" is in schema\.prisma but not in the database/,
    ],
    [
      "a dropped m:n relation",
      /\n\s+(tags\s+Tag|customers\s+Customer)\[\]/g,
      "",
      /table "_CustomerToTag" is in the database but not in schema\.prisma/,
    ],
    [
      "a new @@unique",
      /(@@map\("order_lines"\))/,
      "@@unique([sku])\n  $1",
      /index "order_lines_sku_key" is in schema\.prisma but not in the database/,
    ],
    [
      "a Boolean default flipped",
      /@default\(false\)/,
      "@default(true)",
      /"customers"\."vip": default is false in the database, schema\.prisma says true/,
    ],
  ])("reports %s", async (_label, from, to, expected) => {
    const drift = await findDrift(url, mutate(fixtureSchema, from, to));
    expect(drift.join("\n")).toMatch(expected);
  });

  // Database-side changes, each undone afterwards.
  it.each([
    [
      "an extra table",
      'CREATE TABLE "stray" (id int)',
      'DROP TABLE "stray"',
      /table "stray" is in the database/,
    ],
    [
      "an extra column",
      'ALTER TABLE "orders" ADD "stray" int',
      'ALTER TABLE "orders" DROP "stray"',
      /column "orders"\."stray" is in the database/,
    ],
    [
      "an extra full index",
      'CREATE INDEX "stray_idx" ON "orders"("retries")',
      'DROP INDEX "stray_idx"',
      /index "stray_idx" is in the database/,
    ],
    [
      "an extra foreign key",
      'ALTER TABLE "order_lines" ADD CONSTRAINT "stray_fk" FOREIGN KEY ("sku") REFERENCES "Tag"("label")',
      'ALTER TABLE "order_lines" DROP CONSTRAINT "stray_fk"',
      /foreign key "stray_fk" is in the database/,
    ],
    [
      "an extra enum",
      "CREATE TYPE \"stray_enum\" AS ENUM ('a')",
      'DROP TYPE "stray_enum"',
      /enum "stray_enum" is in the database/,
    ],
  ])("reports %s", async (_label, change, undo, expected) => {
    await withClient(url, (c) => c.query(change));
    try {
      expect((await findDrift(url, fixtureSchema)).join("\n")).toMatch(expected);
    } finally {
      await withClient(url, (c) => c.query(undo));
    }
  });
});

describe("applyMigrations", () => {
  it("two runner processes started at once both succeed, and each migration is applied once", {
    timeout: 60_000,
  }, async () => {
    const url = await tempDatabase();
    // The test holds Prisma's lock key first, so both runners provably collide on it instead of
    // depending on process start-up timing; once released they race for it for real.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock(72707369)");
    const outputs = ["", ""];
    let exited = 0;
    const runs = outputs.map(
      (_, i) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(path.join(root, "node_modules", ".bin", "tsx"), ["scripts/migrate.ts"], {
            cwd: root,
            env: { ...process.env, DATABASE_URL: url },
          });
          const collect = (d: Buffer) => {
            outputs[i] += d.toString();
          };
          child.stdout.on("data", collect);
          child.stderr.on("data", collect);
          child.on("close", (code) => {
            exited++;
            resolve(code);
          });
        }),
    );
    try {
      const waiting = `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
        AND objid = 72707369 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
      for (let t = Date.now(); (await holder.query(waiting)).rows[0]?.n !== 2; ) {
        if (exited > 0 || Date.now() - t > 30_000) {
          throw new Error(`both runners should be queued on the lock:\n${outputs.join("\n")}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await holder.end(); // releases the lock
    }
    const codes = await Promise.all(runs);
    expect(codes, outputs.join("\n")).toEqual([0, 0]);

    const folders = readdirSync(migrationsDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect((await rowsOf(url)).map((r) => r.migration_name)).toEqual(folders.sort());
    for (const name of folders) {
      expect(
        outputs.filter((o) => o.includes(`applied ${name} (`)),
        name,
      ).toHaveLength(1);
    }
    expect(outputs.filter((o) => o.includes("database is up to date"))).toHaveLength(1);
    expect(await findDrift(url, schemaText)).toEqual([]);
  });

  it("keeps Prisma's bookkeeping table and rows, and applies nothing the second time", async () => {
    const url = await tempDatabase();
    const first = await applyMigrations(url, { migrationsDir });
    expect(first.applied).toContain("20261201000000_init");
    expect((await applyMigrations(url, { migrationsDir })).applied).toEqual([]);

    const columns = await withClient(url, async (c) => {
      const { rows } =
        await c.query(`SELECT column_name, data_type, character_maximum_length AS len, is_nullable, column_default
        FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`);
      return rows.map((r) => [r.column_name, r.data_type, r.len, r.is_nullable, r.column_default]);
    });
    expect(columns).toEqual([
      ["id", "character varying", 36, "NO", null],
      ["checksum", "character varying", 64, "NO", null],
      ["finished_at", "timestamp with time zone", null, "YES", null],
      ["migration_name", "character varying", 255, "NO", null],
      ["logs", "text", null, "YES", null],
      ["rolled_back_at", "timestamp with time zone", null, "YES", null],
      ["started_at", "timestamp with time zone", null, "NO", "now()"],
      ["applied_steps_count", "integer", null, "NO", "0"],
    ]);
    const init = (await rowsOf(url)).find((r) => r.migration_name === "20261201000000_init");
    const sql = readFileSync(path.join(migrationsDir, "20261201000000_init", "migration.sql"));
    expect(init).toMatchObject({
      checksum: createHash("sha256").update(sql).digest("hex"),
      rolled_back_at: null,
      logs: null,
      applied_steps_count: 1,
    });
    expect(init?.finished_at).toBeInstanceOf(Date);
  });

  it("refuses when an applied migration's checksum changed (but not for line endings only)", async () => {
    const url = await tempDatabase();
    const dir = tempMigrations({
      "20200101000000_first": "CREATE TABLE a (id int);\n",
      "20200102000000_second": "CREATE TABLE b (id int);\n",
    });
    await applyMigrations(url, { migrationsDir: dir });

    writeMigration(dir, "20200101000000_first", "CREATE TABLE a (id int);\r\n");
    expect((await applyMigrations(url, { migrationsDir: dir })).applied).toEqual([]);

    writeMigration(dir, "20200101000000_first", "CREATE TABLE a (id bigint);\n");
    await expect(applyMigrations(url, { migrationsDir: dir })).rejects.toThrow(
      /20200101000000_first.*checksum/,
    );
  });

  it("rolls a failing migration back completely and records nothing for it", async () => {
    const url = await tempDatabase();
    const dir = tempMigrations({
      "20200101000000_ok": "CREATE TABLE ok_t (id int);\n",
      "20200102000000_bad": "CREATE TABLE bad_t (id int);\nINSERT INTO bad_t VALUES (1);\nSELECT 1 / 0;\n",
    });
    await expect(applyMigrations(url, { migrationsDir: dir })).rejects.toThrow(
      /20200102000000_bad.*division by zero/,
    );

    expect(await tableExists(url, "ok_t")).toBe(true);
    expect(await tableExists(url, "bad_t")).toBe(false);
    const rows = await rowsOf(url);
    expect(rows.map((r) => [r.migration_name, r.finished_at !== null])).toEqual([
      ["20200101000000_ok", true],
    ]);

    // Nothing is left to repair: once fixed, the migration simply applies.
    writeMigration(dir, "20200102000000_bad", "CREATE TABLE bad_t (id int);\n");
    expect((await applyMigrations(url, { migrationsDir: dir })).applied).toEqual(["20200102000000_bad"]);
  });

  it("refuses when an applied migration's folder is missing", async () => {
    const url = await tempDatabase();
    const dir = tempMigrations({ "20200101000000_gone": "CREATE TABLE g (id int);\n" });
    await applyMigrations(url, { migrationsDir: dir });
    rmSync(path.join(dir, "20200101000000_gone"), { recursive: true });
    await expect(applyMigrations(url, { migrationsDir: dir })).rejects.toThrow(
      /20200101000000_gone.*missing/,
    );
  });

  it("refuses when a previous attempt failed (finished_at and rolled_back_at null)", async () => {
    const url = await tempDatabase();
    const dir = tempMigrations({ "20200101000000_half": "CREATE TABLE h (id int);\n" });
    await applyMigrations(url, { migrationsDir: tempMigrations({}) }); // creates the bookkeeping table
    await withClient(url, (c) =>
      c.query(
        "INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES (gen_random_uuid(), 'x', '20200101000000_half')",
      ),
    );
    await expect(applyMigrations(url, { migrationsDir: dir })).rejects.toThrow(/20200101000000_half.*failed/);
    expect(await tableExists(url, "h")).toBe(false);
  });
});
