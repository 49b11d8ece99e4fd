/**
 * Comparisons outside the HTTP server, in this process, against the same database and provider:
 * `payments.create` through its tRPC procedure with the idempotency layer on, the same procedure
 * with the layer switched off (bench-only wiring: the same tRPC pipeline, rate limit and handler,
 * with a stand-in key owner that writes no key, reachable from nowhere but this file), the bare
 * payment path without tRPC, and the app's own SQL sent by node-postgres alone (no ORM, no provider).
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { closedLoop, type LoadResult } from "./load";

export interface VariantDeps {
  url: string;
  providerUrl: string;
  accountId: string;
  orders(n: number): Promise<string[]>;
  clients: readonly number[];
  /** Wraps a load to measure around it (CPU per process); the load's result as is by default. */
  measure?: (run: () => Promise<LoadResult>) => Promise<LoadResult>;
}

const SIZES = [60, 300];

/** Pairs of on/off loads per client count, interleaved: the machine's drift falls on both alike. */
const ROUNDS = 3;

export async function extraComparisons(deps: VariantDeps): Promise<Record<string, LoadResult[]>> {
  const { closeClient, createPrismaClient } = await import("../../../server/db");
  const { createContextInner } = await import("../../../server/context");
  const { createCaller } = await import("../../../server/root");
  const { executePayment, createPaymentPhase } = await import("../../../server/payments/operation");
  const { settleAndBook } = await import("../../../server/payments/settle");
  const { httpProvider } = await import("../../../server/provider");
  const idem = {
    ...(await import("@idempotent-checkout/idempotency/sql")),
    ...(await import("@idempotent-checkout/idempotency/bench")),
  };
  const { accountByTokenStatement } = await import("../../../server/auth/authenticate");
  const { hashToken } = await import("../../../server/auth/tokens");
  const { sendLimitsThrough } = await import("../../../server/limits");
  const { admittedBy, authedProcedure, createCallerFactory, router } = await import("../../../server/trpc");
  const { ZCreatePayment, ZPayment } = await import("../../../server/routers/payments");

  const prisma = createPrismaClient(deps.url);
  // A pool this run ends: the limits' own pool keeps its connections open for minutes.
  const pool = new pg.Pool({ connectionString: deps.url, max: 10 });
  const restoreLimits = sendLimitsThrough(pool);
  const provider = httpProvider({ baseUrl: deps.providerUrl, timeoutMs: 10_000 });
  const account = { id: deps.accountId, handle: "alice", name: "alice" };
  type Owner = Parameters<typeof executePayment>[1];

  // The idempotency layer switched off: phases run as plain statements, no key is written.
  const plainOwner = (): Owner =>
    ({
      recoveryPoint: "started",
      keyId: null,
      completed: null,
      phaseResult: () => undefined,
      derivedKey: () => `bench_${randomUUID()}`,
      atomicPhase: (_point: string, fn: (tx: unknown) => Promise<unknown>) => fn(prisma),
      async completeWith(
        writes: import("@idempotent-checkout/idempotency/sql").StatementWrites,
        data: unknown,
      ) {
        const b = new idem.StatementBuilder();
        writes(b);
        const statement = b.statement();
        await prisma.$queryRawUnsafe(statement.text, ...statement.values);
        return data;
      },
    }) as unknown as Owner;

  // payments.create with the layer off: its router's pipeline (account, input, rate limit, output)
  // and handler, the idempotency middleware taken out.
  const layerOff = createCallerFactory(
    router({
      create: authedProcedure
        .input(ZCreatePayment)
        .use(async ({ ctx, next }) => {
          await admittedBy("paymentsByAccount")({ account: ctx.account, resHeaders: ctx.resHeaders });
          return next();
        })
        .output(ZPayment)
        .mutation(({ ctx, input: request }) =>
          executePayment({ prisma: ctx.prisma, provider }, plainOwner(), ctx.account.id, request),
        ),
    }),
  );

  const out: Record<string, LoadResult[]> = {};
  const add = (name: string, r: LoadResult) => {
    out[name] = [...(out[name] ?? []), r];
  };
  const measure = deps.measure ?? ((run: () => Promise<LoadResult>) => run());
  const input = (orderId: string) => ({ orderId, paymentMethod: "pm_card_visa" });
  const viaProcedure = async (orderId: string) => {
    const ctx = createContextInner({
      prisma,
      principal: { account, isAdmin: false },
      reqHeaders: new Headers({ "idempotency-key": randomUUID() }),
      provider,
    });
    return (await createCaller(ctx).payments.create(input(orderId))).status === "succeeded";
  };
  const viaProcedureLayerOff = async (orderId: string) => {
    const ctx = createContextInner({ prisma, principal: { account, isAdmin: false }, provider });
    return (await layerOff(ctx).create(input(orderId))).status === "succeeded";
  };
  const withoutKey = async (orderId: string) =>
    (await executePayment({ prisma, provider }, plainOwner(), deps.accountId, input(orderId))).status ===
    "succeeded";
  // Warm-up, unmeasured: whichever variant ran first opened the pool's connections, and each new
  // connection plans every statement five times before it keeps a generic plan (decision 0047).
  const most = Math.max(...deps.clients);
  for (const run of [viaProcedure, viaProcedureLayerOff, withoutKey]) {
    const ids = await deps.orders(4 * most);
    await closedLoop(most, ids.length, (k) => run(ids[k] as string));
  }
  for (const [i, clients] of deps.clients.entries()) {
    const n = SIZES[i] as number;
    // Each client count warms its connections first, unmeasured: the pool closes idle ones (10 s)
    // during the loads before, and the first measured load would open them and plan its statements
    // (five custom plans each before a generic one) alone
    // (19 new sessions in "layer on" round 1 at 16 clients, none after, in a run of 2026-12-04).
    for (const run of [viaProcedure, viaProcedureLayerOff]) {
      const ids = await deps.orders(8 * clients);
      await closedLoop(clients, ids.length, (k) => run(ids[k] as string));
    }
    // Interleaved in pairs, several times, so background load falls on both alike.
    for (let round = 0; round < ROUNDS; round++) {
      const withKey = await deps.orders(n);
      const without = await deps.orders(n);
      add(
        `in process: payments.create ×${clients}`,
        await measure(() => closedLoop(clients, n, (k) => viaProcedure(withKey[k] as string))),
      );
      add(
        `in process: idempotency off ×${clients}`,
        await measure(() => closedLoop(clients, n, (k) => viaProcedureLayerOff(without[k] as string))),
      );
    }
    const bare = await deps.orders(n);
    add(
      `in process: bare payment path, no tRPC ×${clients}`,
      await measure(() => closedLoop(clients, n, (k) => withoutKey(bare[k] as string))),
    );
  }

  // The app's SQL for one payment (auth with the key's peek, claim with phase 1, phase 3 with
  // completion), by pg alone.
  const send = (sql: { text: string; values: unknown[] }) => pool.query(sql.text, sql.values as unknown[]);
  for (const [i, clients] of deps.clients.entries()) {
    const ids = await deps.orders(SIZES[i] as number);
    add(
      `node-postgres, the app's SQL ×${clients}`,
      await measure(() =>
        closedLoop(clients, ids.length, async (k) => {
          const key = randomUUID();
          const request = input(ids[k] as string);
          // As the app authenticates an API key: the request's key read with it (decision 0129).
          const peek = idem.peekCompletedKey(idem.sql`a.id`, key);
          await send(accountByTokenStatement(hashToken("sk_test_alice"), peek.column));
          const params = idem.pickFields(request, ["orderId", "paymentMethod"]);
          const claim = {
            accountId: deps.accountId,
            key,
            procedure: "payments.create",
            fingerprint: idem.fingerprint("payments.create", params),
            requestParams: params,
            leaseSeconds: 30,
            ttlSeconds: 86_400,
          };
          const scope = `${deps.accountId}\n${key}`;
          const phase = idem.firstPhaseStatement(createPaymentPhase, request, { account }, scope);
          const { rows } = await send(idem.claimStatement(claim, phase));
          const row = rows[0];
          const p = row.phaseResult;
          const payment = {
            id: p.id,
            orderId: p.order_id,
            accountId: p.account_id,
            amountMinor: p.amount_minor,
            currency: p.currency,
            paymentMethod: p.payment_method,
            providerKey: p.provider_key,
          };
          const charge = { id: `ch_bench_${randomUUID()}`, failureCode: null, failureMessage: null };
          const body = JSON.stringify({ data: { id: payment.id } });
          await send(
            idem.completionStatement(BigInt(row.id), row.fence, 200, body, settleAndBook(payment, charge)),
          );
          return true;
        }),
      ),
    );
  }
  restoreLimits();
  await pool.end();
  await closeClient(prisma);
  return out;
}
