// Production's embedded PostgreSQL, started for real in a temporary directory (decision 0150).
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "../../server/db/migrate";
import { type Database, startDatabase } from "./embedded-pg";
import { freePort } from "./guarded-process";
import { LOCKED_ROLES, lockedUrl } from "./locked-roles";

const saved = { url: process.env.DATABASE_URL, dir: process.env.EMBEDDED_PG_DIR };
const root = mkdtempSync(join(tmpdir(), "locked-pg-"));
chmodSync(root, 0o755); // the postgres user must reach it when the tests run as root
const dataDir = join(root, "pg");
let port: number;
let db: Database;

async function sqlError(url: string, sql: string): Promise<string | undefined> {
  const client = new pg.Client(url);
  try {
    await client.connect();
    await client.query(sql);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  } finally {
    await client.end().catch(() => {});
  }
}

beforeAll(async () => {
  delete process.env.DATABASE_URL; // this is about the embedded server
  process.env.EMBEDDED_PG_DIR = dataDir;
  port = await freePort();
  db = await startDatabase({ instance: "production", port });
}, 60_000);

afterAll(async () => {
  await db?.stop();
  process.env.DATABASE_URL = saved.url;
  if (saved.dir === undefined) delete process.env.EMBEDDED_PG_DIR;
  else process.env.EMBEDDED_PG_DIR = saved.dir;
  rmSync(root, { recursive: true, force: true });
});

describe("the embedded database in production", () => {
  it("keeps its data in EMBEDDED_PG_DIR and its random passwords in a 0600 file beside it", () => {
    expect(statSync(join(dataDir, "PG_VERSION")).isFile()).toBe(true);
    expect(statSync(`${dataDir}.credentials.json`).mode & 0o777).toBe(0o600);
    expect(db.url).toMatch(new RegExp(`^postgresql://${LOCKED_ROLES.app}:`));
  });

  it("refuses postgres/postgres", async () => {
    // 28P01: invalid_password
    expect(await sqlError(lockedUrl(port, "postgres", "postgres", "postgres"), "SELECT 1")).toBe("28P01");
  });

  it("gives the app a role that owns its schema and migrates it, but is no superuser and runs no programs", async () => {
    await applyMigrations(db.url);
    const client = new pg.Client(db.url);
    await client.connect();
    try {
      const { rows } = await client.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user");
      expect(rows).toEqual([{ rolsuper: false }]);
      const tables = await client.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(tables.rows[0].n).toBeGreaterThan(5);
    } finally {
      await client.end();
    }
    // 42501: insufficient_privilege
    expect(await sqlError(db.url, "COPY (SELECT 1) TO PROGRAM 'true'")).toBe("42501");
    expect(await sqlError(db.url, "SELECT pg_read_file('/etc/passwd')")).toBe("42501");
  });

  it("keeps the provider in a database of its own that the app cannot open, and back", async () => {
    if (!db.providerUrl) throw new Error("no provider URL");
    const app = new URL(db.url);
    const provider = new URL(db.providerUrl);
    const crossed = (url: URL, database: string) => Object.assign(new URL(url), { pathname: `/${database}` });
    expect(await sqlError(db.providerUrl, "CREATE SCHEMA payment_provider")).toBeUndefined();
    expect(await sqlError(crossed(provider, LOCKED_ROLES.app).href, "SELECT 1")).toBe("42501");
    expect(await sqlError(crossed(app, LOCKED_ROLES.provider).href, "SELECT 1")).toBe("42501");
  });

  it("starts again on the same directory with the same credentials", async () => {
    await db.stop();
    db = await startDatabase({ instance: "production", port });
    expect(await sqlError(db.url, "SELECT 1 FROM ledger_accounts LIMIT 1")).toBeUndefined();
  }, 30_000);
});
