import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localStorageStore } from "../core/local-storage.js";
import type { IntentStore, StoredIntent } from "../intents.js";
import { fileStore } from "./file.js";
import { memoryStore } from "./index.js";
import { pgStore } from "./pg.js";

const intent = (
  intentId: string,
  key = `key-${intentId}`,
  at = "2026-12-03T10:00:00.000Z",
): StoredIntent => ({
  intentId,
  key,
  request: {
    operation: "payments.create",
    body: { orderId: "0193a1c2-7f00-7000-8000-000000000001", paymentMethod: "pm_card_visa" },
  },
  createdAt: at,
});

let folder: string;
let pool: pg.Pool;
const table = `client_intents_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "client-store-"));
  const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  pool = new pg.Pool({ connectionString: url, max: 4 });
  // The DDL as shipped, under a table name of this test's own.
  const ddl = await readFile(new URL("../../sql/intents.sql", import.meta.url), "utf8");
  await pool.query(ddl.replaceAll("payment_intents", table));
});
afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.end();
  await rm(folder, { recursive: true, force: true });
});

/** localStorage's interface over a Map: the browser's store, run through the same contract. */
function mapStorage() {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    key: (index: number) => [...items.keys()][index] ?? null,
    getItem: (name: string) => items.get(name) ?? null,
    setItem: (name: string, value: string) => void items.set(name, value),
    removeItem: (name: string) => void items.delete(name),
  };
}

const stores: [string, () => IntentStore][] = [
  ["memoryStore", () => memoryStore()],
  [
    "localStorageStore",
    () => {
      const storage = mapStorage();
      return localStorageStore({
        storage: () => storage,
        prefix: "intent:",
        parse: (value) => value as StoredIntent,
      });
    },
  ],
  ["fileStore", () => fileStore(join(folder, randomBytes(4).toString("hex")))],
  ["pgStore", () => pgStore({ pool, table })],
];

describe.each(stores)("%s: the IntentStore contract", (_name, makeStore) => {
  it("stores, lists oldest first, keeps the first of two creates of one id, and forgets", async () => {
    const store = makeStore();
    const prefix = randomBytes(4).toString("hex");
    const a = intent(`${prefix}-a`, "key-a", "2026-12-03T10:00:01.000Z");
    const b = intent(`${prefix}-b/../weird id`, "key-b", "2026-12-03T10:00:00.000Z");
    expect(await store.create(a)).toEqual(a);
    expect(await store.create(b)).toEqual(b);
    // The same id again: the stored intent wins and is not overwritten.
    expect(await store.create({ ...a, key: "another-key" })).toEqual(a);
    const listed = (await store.list()).filter((i) => i.intentId.startsWith(prefix));
    expect(listed).toEqual([b, a]);
    await store.delete(a.intentId);
    await store.delete(a.intentId); // not there any more: not an error
    expect((await store.list()).filter((i) => i.intentId.startsWith(prefix))).toEqual([b]);
    await store.delete(b.intentId);
  });

  it("keeps a final answer with the intent, never on an intent replaced under the same id", async () => {
    const store = makeStore();
    const id = `answered-${randomBytes(4).toString("hex")}`;
    const answer = { status: 200, body: { id: "p1", amount: 2500 }, answeredAt: "2026-12-03T10:00:02.000Z" };
    const stored = await store.create(intent(id, "key-1"));
    await store.settle?.(stored, answer);
    expect((await store.list()).filter((i) => i.intentId === id)).toEqual([{ ...stored, answer }]);
    // Forgotten, then made again with another key: an answer for the old key is not recorded.
    await store.delete(id);
    const replaced = await store.create(intent(id, "key-2"));
    await store.settle?.(stored, answer);
    await store.settle?.({ ...stored, intentId: `${id}-absent` }, answer);
    expect((await store.list()).filter((i) => i.intentId.startsWith(id))).toEqual([replaced]);
    await store.delete(id);
  });

  it("creates one intent when many calls race for the same id", async () => {
    const store = makeStore();
    const id = `race-${randomBytes(4).toString("hex")}`;
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => store.create(intent(id, `key-${i}`))),
    );
    expect(new Set(results.map((r) => r.key)).size).toBe(1);
    expect((await store.list()).filter((i) => i.intentId === id)).toHaveLength(1);
    await store.delete(id);
  });
});

describe("fileStore", () => {
  it("keeps an intent written by a process that was killed right after", async () => {
    const path = join(folder, "killed");
    // A process creates an intent, then kills itself with SIGKILL: no exit handlers run.
    const script = `
      import { fileStore } from ${JSON.stringify(new URL("./file.ts", import.meta.url).pathname)};
      await fileStore(${JSON.stringify(path)}).create(${JSON.stringify(intent("survivor"))});
      process.kill(process.pid, "SIGKILL");`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(run.signal, run.stderr).toBe("SIGKILL");
    expect(await fileStore(path).list()).toEqual([intent("survivor")]);
    // Only the intent's file is left: no temporary file.
    expect(await readdir(path)).toHaveLength(1);
  });
});

describe("pgStore", () => {
  it("refuses a table name that is not an identifier", () => {
    expect(() => pgStore({ pool, table: 'x"; DROP TABLE y; --' })).toThrow(/identifier/);
    expect(() => pgStore({ pool, table: "public.payment_intents" })).not.toThrow();
  });
  it("upgrades a table made by the first DDL (no answer column) when the DDL runs again", async () => {
    const old = `${table}_v1`;
    await pool.query(`CREATE TABLE "${old}" (intent_id text PRIMARY KEY, idempotency_key text NOT NULL,
      request jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    try {
      const ddl = await readFile(new URL("../../sql/intents.sql", import.meta.url), "utf8");
      await pool.query(ddl.replaceAll("payment_intents", old));
      const store = pgStore({ pool, table: old });
      const stored = await store.create(intent("upgraded"));
      await store.settle?.(stored, { status: 402, body: { type: "x" }, answeredAt: stored.createdAt });
      expect(await store.list()).toEqual([
        { ...stored, answer: { status: 402, body: { type: "x" }, answeredAt: stored.createdAt } },
      ]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${old}"`);
    }
  });
});
