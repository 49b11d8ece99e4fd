// The I/O of a fresh payment and nothing else, for `npm run bench:api-profile`: a bare node:http
// server that, per POST, makes the round trips the API tier makes (three statements on one pool,
// the rate limit's on another, one PaymentIntent through Stripe's SDK to the provider) and answers
// a JSON body of a payment's size. No framework, no validation, no logs: its CPU per request is
// what any Node server making those round trips pays on this machine. Plain JavaScript, so no
// transpiler's hooks run in the measured process.
import { createServer } from "node:http";
import pg from "pg";
import Stripe from "stripe";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const limits = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const target = new URL(process.env.PAYMENT_PROVIDER_URL);
const stripe = new Stripe(process.env.PAYMENT_PROVIDER_SECRET || "sk_test_idempotent_checkout", {
  host: target.hostname,
  port: target.port,
  protocol: "http",
  maxNetworkRetries: 0,
});
const statement = (name, text) => (values) => ({ name, text, values });
const auth = statement("auth", "SELECT id::text, handle, name FROM accounts WHERE handle = $1");
const claim = statement("claim", "SELECT $1::text AS key, $2::text AS order_id, now() AS at");
const limit = statement("limit", "SELECT $1::text AS key, 1 AS points, now() AS expire");
const finish = statement("finish", "SELECT $1::text AS id, $2::text AS charge, now() AS at");

const server = createServer(async (req, res) => {
  if (req.method === "GET") return void res.end("ok"); // readiness
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const { orderId, paymentMethod } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const key = req.headers["idempotency-key"];
  const account = (await pool.query(auth(["alice"]))).rows[0];
  await pool.query(claim([key, orderId]));
  await limits.query(limit([account.id]));
  const intent = await stripe.paymentIntents.create(
    { amount: 2500, currency: "eur", payment_method: paymentMethod, confirm: true, metadata: { key } },
    { idempotencyKey: `skeleton_${key}` },
  );
  const row = (await pool.query(finish([orderId, intent.id]))).rows[0];
  const body = JSON.stringify({
    result: {
      data: {
        id: row.id,
        orderId,
        accountId: account.id,
        amount: 2500,
        currency: "EUR",
        status: intent.status,
        providerChargeId: intent.id,
        paymentMethod,
        captureMethod: "automatic",
        createdAt: row.at,
        updatedAt: row.at,
      },
    },
  });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT), process.env.HOSTNAME ?? "127.0.0.1", () =>
  console.log(`skeleton listening on ${process.env.PORT}`),
);
process.once("SIGTERM", () =>
  server.close(() => Promise.all([pool.end(), limits.end()]).then(() => process.exit(0))),
);
