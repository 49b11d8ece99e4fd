import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { TRPCError } from "@trpc/server";
import pg from "pg";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { authenticate } from "../auth/authenticate";
import { createContextInner } from "../context";
import { db, shareConnections } from "../db";
import { env } from "../env";
import { PrismaClient } from "../generated/prisma/client";
import { sendLimitsThrough } from "../limits";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable } from "../test/idempotent-router";
import { createTestOrder } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";

/**
 * Round trips to Postgres, counted at the driver: every `query` of every pooled connection of
 * a pg.Pool that only this file's Prisma client uses. One query is one round trip (pg sends an
 * extended-protocol statement as one flight ending in Sync). Prisma's interactive transaction
 * over adapter-pg sends BEGIN and COMMIT and nothing else (measured), so the idempotency layer's
 * share is exact: without it, the handler costs BEGIN, INSERT, COMMIT; with it, one claim before
 * and one completion statement inside.
 */
interface Statement {
  kind: string;
  connection: number;
}

const KINDS: [RegExp, string][] = [
  [/^BEGIN/, "BEGIN"],
  [/^COMMIT/, "COMMIT"],
  [/^ROLLBACK/, "ROLLBACK"],
  [/^\s*WITH ins AS \(\s*INSERT INTO idempotency_keys/, "claim"],
  [/^\s*WITH done AS \(\s*UPDATE idempotency_keys\s+SET state = 'completed'/, "complete"],
  [/^\s*WITH moved AS \(\s*UPDATE idempotency_keys/, "progress"],
  [/^\s*WITH taken AS \(\s*UPDATE idempotency_keys/, "take over"],
  [/^\s*WITH released AS/, "release"],
  [/^\s*DELETE FROM idempotency_keys/, "delete expired"],
  [/^\s*WITH\s+settled_\d+ AS \(\s*UPDATE payments/, "phase 3 + complete"],
  [/^\s*WITH key AS [\s\S]*SELECT a\.id::text AS id, a\.handle/, "auth"],
  [/^\s*INSERT INTO "rate_limits"/, "rate limit"],
  [/^\s*INSERT INTO idem_test_effects/, "business insert"],
  [/^\s*SELECT id::text FROM idem_test_effects/, "business select"],
];
const kindOf = (sql: string) => KINDS.find(([re]) => re.test(sql))?.[1] ?? `other: ${sql.slice(0, 60)}`;

let log: Statement[] = [];
let pool: pg.Pool;
let counted: PrismaClient;
let account: TestAccount;
const measured: [string, string[]][] = [];

beforeAll(async () => {
  await ensureEffectsTable(db());
  account = await createTestAccount("cost");
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  let connections = 0;
  pool.on("connect", (client) => {
    const connection = ++connections;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const first = args[0];
      const sql = typeof first === "string" ? first : (first as { text: string }).text;
      log.push({ kind: kindOf(sql), connection });
      return query(...args);
    }) as typeof client.query;
  });
  counted = new PrismaClient({ adapter: new PrismaPg(pool) });
  // As createPrismaClient does: the hot statements go past the ORM, on the same counted pool.
  shareConnections(counted, pool);
  await counted.$queryRaw`SELECT 1`;
});

afterAll(async () => {
  await counted.$disconnect();
  await pool.end();
  const width = Math.max(...measured.map(([name]) => name.length));
  console.info(
    `[cost] round trips per request:\n${measured
      .map(([name, kinds]) => `  ${name.padEnd(width)}  ${kinds.length}  ${kinds.join(" → ")}`)
      .join("\n")}`,
  );
});

type Input = { amount: number; note: string; sleepMs?: number; fail?: "business" | "unexpected" };

async function call(procedure: "effect" | "phased" | "plain", key: string, input: Input | { n: number }) {
  const base = contextFor(account, { "idempotency-key": key });
  const ctx = createContextInner({ ...base, prisma: counted });
  const caller = createTestCaller(ctx);
  try {
    return {
      data: await (caller[procedure] as (i: unknown) => Promise<unknown>)(input),
      headers: ctx.resHeaders,
    };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { error, headers: ctx.resHeaders };
  }
}

/** The statements one request sent, by kind. */
async function measure(name: string, request: () => Promise<unknown>): Promise<Statement[]> {
  log = [];
  await request();
  const statements = log;
  log = [];
  measured.push([name, statements.map((s) => s.kind)]);
  return statements;
}
const kinds = (s: Statement[]) => s.map((x) => x.kind);

describe("round trips to the database", () => {
  it("a fresh request: one to claim; the completion is one more statement inside the business transaction", async () => {
    const key = randomUUID();
    const s = await measure("fresh (effect)", () => call("effect", key, { amount: 1, note: "fresh" }));
    expect(kinds(s)).toEqual(["claim", "BEGIN", "business insert", "complete", "COMMIT"]);
    // The business write and the completion travel on one connection between one BEGIN and COMMIT.
    const [, begin, business, complete, commit] = s;
    expect(new Set([begin, business, complete, commit].map((x) => x?.connection)).size).toBe(1);
  });

  it("a replay, a 409 and a 422 cost one round trip each", async () => {
    const key = randomUUID();
    await call("effect", key, { amount: 2, note: "done" });
    const replay = await measure("replay", () => call("effect", key, { amount: 2, note: "done" }));
    const mismatch = await measure("422 (other body)", () =>
      call("effect", key, { amount: 3, note: "done" }),
    );

    const busy = randomUUID();
    const slowCtx = contextFor(account, { "idempotency-key": busy });
    const slow = createTestCaller(slowCtx).effect({ amount: 4, note: "slow", sleepMs: 400 });
    await new Promise((r) => setTimeout(r, 100));
    const conflict = await measure("409 (in flight)", () =>
      call("effect", busy, { amount: 4, note: "slow" }),
    );
    await slow;

    expect(kinds(replay)).toEqual(["claim"]);
    expect(kinds(mismatch)).toEqual(["claim"]);
    expect(kinds(conflict)).toEqual(["claim"]);
  });

  it("the other paths, each a fixed number of statements", async () => {
    const plain = await measure("fresh, no business transaction (plain)", () =>
      call("plain", randomUUID(), { n: 1 }),
    );
    expect(kinds(plain)).toEqual(["claim", "complete"]);

    const declined = await measure("stored business error (402)", () =>
      call("effect", randomUUID(), { amount: 5, note: "declined", fail: "business" }),
    );
    expect(kinds(declined)).toEqual(["claim", "complete"]);

    const flaky = randomUUID();
    const failed = await measure("unexpected error (released)", () =>
      call("effect", flaky, { amount: 6, note: "flaky", fail: "unexpected" }),
    );
    expect(kinds(failed)).toEqual(["claim", "release"]);
    const takeover = await measure("retry after release (take over)", () =>
      call("effect", flaky, { amount: 6, note: "flaky" }),
    );
    expect(kinds(takeover)).toEqual(["claim", "take over", "BEGIN", "business insert", "complete", "COMMIT"]);

    const phased = await measure("two atomic phases (phased)", () =>
      call("phased", randomUUID(), { amount: 7, note: "phased" }),
    );
    expect(kinds(phased)).toEqual([
      ...["claim", "BEGIN", "business insert", "progress", "COMMIT"],
      ...["BEGIN", "business select", "complete", "COMMIT"],
    ]);

    const old = randomUUID();
    await call("plain", old, { n: 1 });
    await db().$executeRaw`UPDATE idempotency_keys SET expires_at = now() - interval '1 minute'
      WHERE account_id = ${account.id}::uuid AND key = ${old}`;
    const reused = await measure("expired key reused", () => call("plain", old, { n: 2 }));
    expect(kinds(reused)).toEqual(["claim", "delete expired", "claim", "complete"]);
  });
});

/**
 * The targets of issue 15 for payments.create itself, authentication included: a fresh payment
 * at most 8 statements in its request path (the provider's own are in its process); a replay,
 * a 409 and a 422 one statement each beyond the authentication.
 */
describe("round trips of payments.create, authentication included", () => {
  const FRESH_PAYMENT_TARGET = 8;
  let provider: TestProvider;
  let restoreLimits = () => {};
  it.beforeAll(async ({ provider: running }) => {
    provider = running;
    // The payment limit's counter is a statement of the request path too: counted here.
    restoreLimits = sendLimitsThrough(pool);
  });
  afterAll(() => restoreLimits());

  async function payCounted(key: string, input: { orderId: string; paymentMethod: string }, hold?: string) {
    const reqHeaders = new Headers({
      authorization: `Bearer ${account.token}`,
      "idempotency-key": key,
      ...(hold ? { "x-provider-fault": hold } : {}),
    });
    const principal = await authenticate(counted, reqHeaders, {
      sessionSecret: env.SESSION_SECRET,
      adminToken: env.ADMIN_TOKEN,
    });
    const ctx = createContextInner({ prisma: counted, principal, reqHeaders, provider: provider.client });
    try {
      return { data: await createCaller(ctx).payments.create(input), headers: ctx.resHeaders };
    } catch (error) {
      if (!(error instanceof TRPCError)) throw error;
      return { error, headers: ctx.resHeaders };
    }
  }

  it("a fresh payment: authentication, the claim with phase 1, the payment limit, phase 3 with the key's completion", async () => {
    const order = await createTestOrder(account);
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const s = await measure("payment: fresh", () => payCounted(randomUUID(), input));
    expect(kinds(s)).toEqual(["auth", "claim", "rate limit", "phase 3 + complete"]);
    expect(s.length).toBeLessThanOrEqual(FRESH_PAYMENT_TARGET);
  });

  it("a replay of a payment: its authentication alone; a 409 and a 422: one statement each after it", async () => {
    const key = randomUUID();
    const order = await createTestOrder(account);
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    expect((await payCounted(key, input)).data?.status).toBe("succeeded");
    let answer: Awaited<ReturnType<typeof payCounted>> | undefined;
    const replay = await measure("payment: replay", async () => {
      answer = await payCounted(key, input);
    });
    expect(answer?.headers.get("idempotent-replayed")).toBe("true");
    // The API key's statement read the completed key (decision 0129): no claim.
    expect(kinds(replay)).toEqual(["auth"]);
    const other = await createTestOrder(account);
    const mismatch = await measure("payment: 422", async () => {
      answer = await payCounted(key, { ...input, orderId: other.id });
    });
    expect(answer?.error?.code).toBe("UNPROCESSABLE_CONTENT");
    expect(kinds(mismatch)).toEqual(["auth", "claim"]);

    // A payment held at the provider keeps its key in flight.
    const busy = randomUUID();
    const held = payCounted(busy, { ...input, orderId: other.id }, "latency=1500");
    await new Promise((r) => setTimeout(r, 400));
    const conflict = await measure("payment: 409", async () => {
      answer = await payCounted(busy, { ...input, orderId: other.id });
    });
    expect(answer?.error?.code).toBe("CONFLICT");
    expect(kinds(conflict)).toEqual(["auth", "claim"]);
    expect((await held).data?.status).toBe("succeeded");
  });
});
