import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATORS_ACCOUNT } from "../refunds";
import { createScratchDatabase } from "../test/fixtures";
import { applyMigrations } from "./migrate";

// The migration that makes the operators' account (decision 0147), on a database where a shopper
// registered its address first (possible before it): the shopper keeps the account under another
// address on .invalid, and the operators' account exists with its own id.

const MIGRATIONS = path.join(process.cwd(), "prisma", "migrations");
const RESERVING = "20261205014100_reserved_identities";
let url: string;
let drop: () => Promise<void>;
let before: string;

beforeAll(async () => {
  ({ url, drop } = await createScratchDatabase("reserved"));
  // Every migration before the one under test, from a folder of their own.
  before = mkdtempSync(path.join(tmpdir(), "migrations-"));
  for (const m of readdirSync(MIGRATIONS).filter((m) => m < RESERVING))
    cpSync(path.join(MIGRATIONS, m), path.join(before, m), { recursive: true });
  await applyMigrations(url, { migrationsDir: before });
});

afterAll(async () => {
  rmSync(before, { recursive: true, force: true });
  await drop();
});

describe("the reserved identities migration", () => {
  it("frees the operators' address from a shopper who took it, and makes the operators' account", async () => {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows: squatter } = await db.query<{ id: string }>(
        `INSERT INTO accounts (id, handle, name, email) VALUES (gen_random_uuid(), $1, $1, $1) RETURNING id::text`,
        [OPERATORS_ACCOUNT.email],
      );
      await applyMigrations(url);
      const { rows } = await db.query<{ id: string; handle: string; email: string }>(
        "SELECT id::text, handle, email FROM accounts ORDER BY handle",
      );
      expect(rows).toEqual([
        { id: OPERATORS_ACCOUNT.id, handle: "operators", email: OPERATORS_ACCOUNT.email },
        {
          id: squatter[0]?.id,
          handle: OPERATORS_ACCOUNT.email,
          email: `${squatter[0]?.id}@squatted.invalid`,
        },
      ]);
    } finally {
      await db.end();
    }
  });
});
