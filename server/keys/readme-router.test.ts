import { randomUUID } from "node:crypto";
import { initTRPC, TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { z } from "zod";
import { type Db, db } from "../db";
import type { TestAccount } from "../test/fixtures";
import { it } from "../test/vitest";
import { idempotency } from "./index";

/**
 * A second app's router on this app's database, mounted as packages/idempotency/README.md says
 * (through the app's binding, ../keys; the package's own stranger's app is its fixture): its own initTRPC and
 * context, the middleware mounted under another path ("store.checkout.pay") and another name
 * ("shop.charge"), a handler that writes through the KeyOwner.
 */
interface ShopContext {
  prisma: Db;
  account: { id: string };
  reqHeaders: Headers;
  resHeaders: Headers;
  /** What the binding reads beside: how the call arrived, and a key read ahead (none here). */
  transport: { batched: boolean };
  principal: object;
}
const t = initTRPC.context<ShopContext>().create();

const keyed = t.procedure.use(idempotency.keyHeader);

const CHARGE = "shop.charge";
const ZCharge = z.object({ orderRef: z.string(), amount: z.number().int(), slowMs: z.number().default(0) });
type TCharge = z.infer<typeof ZCharge>;
const chargeOnce = idempotency.claim<TCharge>({ procedure: CHARGE, fields: ["orderRef", "amount"] });

const unguarded = idempotency.claim<TCharge>({ procedure: "shop.unguarded", fields: ["orderRef", "amount"] });

const shopRouter = t.router({
  // Wired without replayable(): a replay would run the handler again, so the middleware refuses it.
  unwrapped: keyed
    .input(ZCharge)
    .use(unguarded)
    .mutation(({ input }) => ({ amount: input.amount })),
  store: t.router({
    checkout: t.router({
      pay: keyed
        .input(ZCharge)
        .use(chargeOnce)
        .mutation(
          idempotency.replayable(async ({ ctx, input }) => {
            await new Promise((r) => setTimeout(r, input.slowMs));
            return ctx.idempotency.complete(async (tx) => {
              const id = randomUUID();
              await tx.$executeRaw`INSERT INTO readme_shop_charges (id, order_ref, amount) VALUES (${id}::uuid, ${input.orderRef}, ${input.amount})`;
              return { chargeId: id, amount: input.amount };
            });
          }),
        ),
    }),
  }),
});
const createCaller = t.createCallerFactory(shopRouter);

let account: TestAccount;
it.beforeAll(async ({ account: fixture }) => {
  account = fixture;
  await db().$executeRawUnsafe(
    "CREATE TABLE IF NOT EXISTS readme_shop_charges (id uuid PRIMARY KEY, order_ref text NOT NULL, amount int NOT NULL)",
  );
});

async function pay(key: string, input: { orderRef: string; amount: number; slowMs?: number }) {
  const ctx = {
    prisma: db(),
    account: { id: account.id },
    reqHeaders: new Headers({ "idempotency-key": key }),
    resHeaders: new Headers(),
    transport: { batched: false },
    principal: {},
  };
  try {
    return { data: await createCaller(ctx).store.checkout.pay(input), headers: ctx.resHeaders };
  } catch (error) {
    if (error instanceof TRPCError) return { error, headers: ctx.resHeaders };
    throw error;
  }
}

const chargesFor = async (orderRef: string) =>
  (
    await db().$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM readme_shop_charges WHERE order_ref = ${orderRef}`
  )[0]?.n;

describe("a second router, mounted as the README says", () => {
  it("claims under its own name, replays, and answers 422 to another request with the key", async () => {
    const key = randomUUID();
    const orderRef = randomUUID();
    const first = await pay(key, { orderRef, amount: 500 });
    expect(first.data?.amount).toBe(500);
    const [row] = await db().$queryRaw<{ procedure: string; state: string }[]>`
      SELECT procedure, state FROM idempotency_keys WHERE account_id = ${account.id}::uuid AND key = ${key}`;
    expect(row).toEqual({ procedure: CHARGE, state: "completed" });

    const again = await pay(key, { orderRef, amount: 500 });
    expect(again.data).toEqual(first.data);
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    const other = await pay(key, { orderRef, amount: 900 });
    expect(other.error?.code).toBe("UNPROCESSABLE_CONTENT");
    expect(await chargesFor(orderRef)).toBe(1);
  });

  it("refuses to answer a replay through a resolver not wrapped in replayable()", async () => {
    const key = randomUUID();
    const ctx = () => ({
      prisma: db(),
      account: { id: account.id },
      reqHeaders: new Headers({ "idempotency-key": key }),
      resHeaders: new Headers(),
      transport: { batched: false },
      principal: {},
    });
    const input = { orderRef: randomUUID(), amount: 1 };
    expect(await createCaller(ctx()).unwrapped(input)).toEqual({ amount: 1 });
    await expect(createCaller(ctx()).unwrapped(input)).rejects.toThrow(/not wrapped in replayable/);
  });

  it("answers 409 with Retry-After while the first request is in flight", async () => {
    const key = randomUUID();
    const orderRef = randomUUID();
    const slow = pay(key, { orderRef, amount: 700, slowMs: 800 });
    await new Promise((r) => setTimeout(r, 200));
    const duplicate = await pay(key, { orderRef, amount: 700 });
    expect(duplicate.error?.code).toBe("CONFLICT");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await slow).data?.amount).toBe(700);
    expect(await chargesFor(orderRef)).toBe(1);
  });
});
