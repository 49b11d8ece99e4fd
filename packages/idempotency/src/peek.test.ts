import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyDb, nodePostgresKeyDb, type PgClientLike } from "./db.js";
import { type IdempotencyHandle, idempotent, isStoredReplay } from "./middleware.js";
import { type PeekedKey, peekCompletedKey } from "./peek.js";
import { sql } from "./sql.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

let database: TestDatabase;
let statements = 0;
let counted: KeyDb<PgClientLike>;
beforeAll(async () => {
  database = await freshDatabase();
  const db = nodePostgresKeyDb(database.pool);
  // Every statement the layer sends, counted.
  const count = <T>(sent: T): T => {
    statements++;
    return sent;
  };
  counted = {
    query: (s) => count(db.query(s)),
    execute: (s) => count(db.execute(s)),
    transaction: (fn, o) => count(db.transaction(fn, o)),
    queryIn: (tx, s) => count(db.queryIn(tx, s)),
  };
});
afterAll(() => database.drop());

type Ctx = { peek?: PeekedKey | null };
const charge = idempotent<{ amount: number }, PgClientLike, Ctx>({
  procedure: "test.peek",
  database: () => counted,
  peeked: (ctx) => ctx.peek,
});
let runs = 0;
async function call(accountId: string, key: string, amount: number, peek?: PeekedKey | null) {
  const resHeaders = new Headers();
  const result = await charge({
    ctx: { account: { id: accountId }, idempotencyKey: key, resHeaders, peek },
    input: { amount },
    next: async ({ ctx }: { ctx: { idempotency: IdempotencyHandle<PgClientLike> } }) => {
      if (isStoredReplay(ctx.idempotency)) return { ok: true as const, data: ctx.idempotency.take() };
      runs++;
      return { ok: true as const, data: { amount, run: runs } };
    },
  });
  return { result, replayed: resHeaders.get("Idempotent-Replayed") === "true" };
}

/** The app's own statement (its authentication, say) with the peek as one of its columns. */
async function peek(accountId: string, key: string): Promise<PeekedKey | null> {
  const part = peekCompletedKey(sql`${accountId}::uuid`, key);
  const statement = sql`SELECT ${part.column} AS peeked`;
  const { rows } = await database.pool.query(statement.text, statement.values);
  return part.read(rows[0]?.peeked);
}

describe("a key read ahead by the app's statement (peekCompletedKey)", () => {
  it("answers a replay of a completed key with no statement of the layer's own", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const first = await call(account, key, 700);
    expect(first.replayed).toBe(false);
    const peeked = await peek(account, key);
    expect(peeked).toMatchObject({ accountId: account, key, fence: 1 });

    const before = statements;
    const again = await call(account, key, 700, peeked);
    expect(statements - before).toBe(0);
    expect(again).toEqual({ result: first.result, replayed: true });
    // Byte for byte, key order included (jsonb would have put "run" before "amount").
    expect(JSON.stringify(again.result)).toBe(JSON.stringify(first.result));
    expect(runs).toBe((first.result as { data: { run: number } }).data.run);
  });

  it("claims as usual when the request differs, or the peek is of another key or account", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    await call(account, key, 500);
    const peeked = await peek(account, key);
    if (!peeked) throw new Error("no peek");

    let before = statements;
    await expect(call(account, key, 501, peeked)).rejects.toMatchObject({ code: "UNPROCESSABLE_CONTENT" });
    expect(statements - before).toBeGreaterThan(0);

    before = statements;
    const other = await call(account, randomUUID(), 500, peeked);
    expect(other.replayed).toBe(false);
    expect(statements - before).toBeGreaterThan(0);

    await expect(call(randomUUID(), key, 500, peeked)).resolves.toMatchObject({ replayed: false });
  });

  it("reads nothing for a key in flight, one that expired, or none", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    await database.pool.query(
      `INSERT INTO idempotency_keys (account_id, key, procedure, fingerprint, request_params, lease_seconds, locked_until, expires_at)
       VALUES ($1, $2, 'test.peek', $3, '{}', 30, now() + interval '30 s', now() + interval '1 h')`,
      [account, key, "c".repeat(64)],
    );
    expect(await peek(account, key)).toBeNull();
    const done = randomUUID();
    await call(account, done, 100);
    await database.pool.query(
      "UPDATE idempotency_keys SET expires_at = now() - interval '1 s' WHERE key = $1",
      [done],
    );
    expect(await peek(account, done)).toBeNull();
    expect(await peek(account, randomUUID())).toBeNull();
  });

  it("keeps a stored error as stored", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const failing = idempotent<{ amount: number }, PgClientLike, Ctx>({
      procedure: "test.peek.failing",
      database: () => counted,
      peeked: (ctx) => ctx.peek,
    });
    const send = (peekedKey?: PeekedKey | null) =>
      failing({
        ctx: { account: { id: account }, idempotencyKey: key, resHeaders: new Headers(), peek: peekedKey },
        input: { amount: 1 },
        next: async () => ({
          ok: false as const,
          error: new TRPCError({ code: "BAD_REQUEST", message: "card declined" }),
        }),
      });
    await expect(send()).resolves.toMatchObject({ ok: false });
    const before = statements;
    await expect(send(await peek(account, key))).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "card declined",
    });
    expect(statements - before).toBe(0);
  });
});
