/**
 * `npm run bench:console`: the console's list searches (server/admin/lists.ts, the functions the
 * /admin/orders and /admin/payments pages call) against a million payments, each timed and shown
 * with its EXPLAIN (ANALYZE, BUFFERS) plan. The rows go into a database of their own beside
 * DATABASE_URL's (`<name>_million`), made here with INSERT … SELECT generate_series; it is kept
 * for the next run (BENCH_FRESH=1 makes it again).
 */
import { performance } from "node:perf_hooks";
import pg from "pg";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const CUSTOMERS = 20_000;
const RUNS = 5;

const base = process.env.DATABASE_URL;
if (!base) throw new Error("bench:console needs DATABASE_URL: its database is made on that server.");
const server = new URL(base);
const name = `${server.pathname.slice(1) || "postgres"}_million`;
const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();

const admin = new pg.Client({ connectionString: base });
await admin.connect();
const exists = (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
if (exists && process.env.BENCH_FRESH === "1") await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
if (!exists || process.env.BENCH_FRESH === "1") await admin.query(`CREATE DATABASE "${name}"`);
await admin.end();

const { applyMigrations } = await import("../../server/db/migrate");
await applyMigrations(url);
const db = new pg.Client({ connectionString: url });
await db.connect();
await db.query("SET statement_timeout = 0");

const have = Number((await db.query("SELECT count(*) AS n FROM payments")).rows[0].n);
if (have !== ROWS) await seed();

async function seed() {
  const t0 = performance.now();
  await db.query("TRUNCATE payments, orders, accounts CASCADE");
  // Shoppers with emails; one in ten payments belongs to one big customer (a marketplace, say).
  await db.query(
    `INSERT INTO accounts (id, handle, name, email)
     SELECT gen_random_uuid(), 'bench-' || g, 'Shopper ' || g, 'shopper' || g || '@bench.example'
       FROM generate_series(0, ${CUSTOMERS}) g`,
  );
  // A year of payments, one a ~30 s, one order each; amounts in 495 steps of 1.00, statuses as a
  // shop sees them (mostly succeeded). Deterministic: g picks everything.
  await db.query(
    `CREATE UNLOGGED TABLE bench_rows AS
     SELECT g, gen_random_uuid() AS order_id, gen_random_uuid() AS payment_id,
            a.ids[(1 + CASE WHEN g % 10 = 0 THEN 0 ELSE 1 + (g * 7919) % ${CUSTOMERS} END)::int] AS account_id,
            now() - make_interval(secs => (${ROWS} - g) * (31536000.0 / ${ROWS})) AS at,
            (500 + ((g * 104729) % 495) * 100)::int AS amount,
            CASE WHEN (g * 31) % 100 < 90 THEN 'succeeded' WHEN (g * 31) % 100 < 95 THEN 'declined'
                 WHEN (g * 31) % 100 < 97 THEN 'failed' WHEN (g * 31) % 100 < 99 THEN 'canceled'
                 ELSE 'pending' END AS status
       FROM generate_series(1::bigint, ${ROWS}) g,
            (SELECT array_agg(id ORDER BY (substr(handle, 7))::int) AS ids FROM accounts) a`,
  );
  await db.query(
    `INSERT INTO orders (id, account_id, status, total_minor, currency, created_at, updated_at)
     SELECT order_id, account_id, CASE status WHEN 'succeeded' THEN 'paid' ELSE 'pending_payment' END,
            amount, 'EUR', at, at
       FROM bench_rows ORDER BY g`,
  );
  await db.query(
    `INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method, status,
                           provider_key, provider_charge_id, captured_minor, created_at, updated_at)
     SELECT payment_id, order_id, account_id, amount, 'EUR', 'pm_card_visa', status, 'bench-' || g,
            CASE WHEN status = 'succeeded' THEN 'ch_bench_' || g END,
            CASE WHEN status = 'succeeded' THEN amount END, at + interval '1 second', at + interval '2 seconds'
       FROM bench_rows ORDER BY g`,
  );
  await db.query("DROP TABLE bench_rows");
  await db.query("VACUUM ANALYZE accounts, orders, payments");
  console.log(`seeded ${ROWS} orders and payments in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

const { createPrismaClient } = await import("../../server/db");
const lists = await import("../../server/admin/lists");
const prisma = createPrismaClient(url);

const sample = async (sql: string) => (await db.query(sql)).rows[0];
const mid = await sample(`SELECT p.id, p.order_id, p.created_at FROM payments p
  ORDER BY p.created_at DESC, p.id DESC OFFSET ${Math.floor(ROWS / 2)} LIMIT 1`);
const shopper = await sample("SELECT email FROM accounts WHERE handle = 'bench-1234'");
const big = await sample("SELECT email FROM accounts WHERE handle = 'bench-0'");
const day = new Date(mid.created_at);
const from = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()));
const to = new Date(from.getTime() + 86_400_000);
const deepCursor = lists.encodeListCursor({ at: new Date(mid.created_at).toISOString(), id: mid.id });

type Input = Parameters<typeof lists.ZListSearch.parse>[0];
const payments: [string, Input][] = [
  ["newest page", {}],
  ["by payment id", { q: mid.id }],
  ["by order id", { q: mid.order_id }],
  ["by email (45 payments)", { q: shopper.email }],
  ["by email (100,000 payments)", { q: big.email }],
  ["by amount (common: 1 in 495)", { amountMinor: 25_000 }],
  ["by amount (none match)", { amountMinor: 123 }],
  ["by status (canceled, 2 %)", { status: "canceled" }],
  ["by status (authorized: none in these rows)", { status: "authorized" }],
  ["date range (one day)", { from: from.toISOString(), to: to.toISOString() }],
  [
    "date range + status + amount",
    { from: from.toISOString(), to: to.toISOString(), status: "succeeded", amountMinor: 25_000 },
  ],
  ["email + date range", { q: big.email, from: from.toISOString(), to: to.toISOString() }],
  ["next page at the 500,000th row (cursor)", { cursor: deepCursor }],
];
const orders: [string, Input][] = [
  ["orders: newest page", {}],
  ["orders: by payment id", { q: mid.id }],
  ["orders: by amount (none match)", { amountMinor: 123 }],
  ["orders: by email (45 orders)", { q: shopper.email }],
  ["orders: by email (100,000 orders)", { q: big.email }],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

interface Result {
  name: string;
  rows: number;
  ms: number;
  plan: string[];
}
const results: Result[] = [];

async function time(
  label: string,
  input: Input,
  list: (i: ReturnType<typeof lists.ZListSearch.parse>) => Promise<{ rows: unknown[] }>,
  statement: (i: ReturnType<typeof lists.ZListSearch.parse>) => { text: string; values: readonly unknown[] },
) {
  const parsed = lists.ZListSearch.parse(input);
  let rows = 0;
  const times: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const t0 = performance.now();
    rows = (await list(parsed)).rows.length;
    // The first run warms the caches and the connection; the median of the others is reported.
    if (run > 0) times.push(performance.now() - t0);
  }
  const s = statement(parsed);
  const plan = (
    await db.query({ text: `EXPLAIN (ANALYZE, BUFFERS) ${s.text}`, values: [...s.values] })
  ).rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]);
  results.push({ name: label, rows, ms: median(times), plan });
}

for (const [label, input] of payments)
  await time(label, input, (i) => lists.listPayments(prisma, i), lists.paymentsStatement);
for (const [label, input] of orders)
  await time(label, input, (i) => lists.listOrders(prisma, i), lists.ordersStatement);

/** The plan's scans and sorts, in plan order, each named once. */
const scans = (plan: string[]) => [
  ...new Set(
    plan.flatMap((l) =>
      [
        ...l.matchAll(
          /(Index Only Scan(?: Backward)? using \S+|Index Scan(?: Backward)? using \S+|Bitmap Index Scan on \S+|Seq Scan on \S+|Incremental Sort|(?<!\w )Sort(?= \())/g,
        ),
      ].map((m) => m[1] ?? ""),
    ),
  ),
];
const executionMs = (plan: string[]) =>
  plan.find((l) => l.startsWith("Execution Time"))?.replace(/\D+([\d.]+).*/, "$1");

console.log(`\n${ROWS} payments and orders, ${CUSTOMERS + 1} shoppers; median of ${RUNS} calls each\n`);
console.log("| search | rows | call ms (median) | execution ms (EXPLAIN ANALYZE) | scans |");
console.log("| --- | ---: | ---: | ---: | --- |");
for (const r of results)
  console.log(
    `| ${r.name} | ${r.rows} | ${r.ms.toFixed(1)} | ${executionMs(r.plan)} | ${scans(r.plan).join(", ")} |`,
  );
for (const r of results) console.log(`\n### ${r.name}\n\n${r.plan.join("\n")}`);

await prisma.$disconnect();
await db.end();
