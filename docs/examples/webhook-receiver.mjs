// A merchant's webhook receiver: plain Node, the `standardwebhooks` package and PostgreSQL.
//
//   WEBHOOK_SECRET=whsec_… DATABASE_URL=postgresql://… PORT=8080 node docs/examples/webhook-receiver.mjs
//
// We deliver every event at least once and in no particular order. This receiver makes that
// exactly once: it verifies the signature over the raw body, then records the `webhook-id` in
// its own table in the same transaction as its own effect, so a second delivery of a message
// changes nothing. A payload older than what it already holds for the same object (by
// `data.updatedAt`) is acknowledged and ignored. During a secret rotation give both secrets,
// comma-separated: either verifies.
import http from "node:http";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { Webhook } from "standardwebhooks";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS received_webhooks (
    webhook_id  text PRIMARY KEY,
    type        text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE IF NOT EXISTS payment_states (
    payment_id  text PRIMARY KEY,
    status      text NOT NULL,
    updated_at  timestamptz NOT NULL
  );`;

/** Verifies with any of the secrets; throws when none matches or the timestamp is too old. */
function verify(webhooks, body, headers) {
  let last;
  for (const webhook of webhooks) {
    try {
      return webhook.verify(body, headers);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

/** Applies one verified event, once: the webhook-id's row and the effect commit together. */
async function applyOnce(pool, webhookId, event) {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const fresh = await client.query(
      "INSERT INTO received_webhooks (webhook_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [webhookId, event.type],
    );
    if (fresh.rowCount === 1 && event.data?.object === "payment") {
      // Only a newer state of the payment replaces the one held: no order is promised.
      await client.query(
        `INSERT INTO payment_states (payment_id, status, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (payment_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
          WHERE payment_states.updated_at < excluded.updated_at`,
        [event.data.id, event.data.status, event.data.updatedAt],
      );
    }
    await client.query("COMMIT");
    return fresh.rowCount === 1;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

export async function startWebhookReceiver({ secrets, databaseUrl, port = 0, host = "127.0.0.1" }) {
  const webhooks = secrets.map((s) => new Webhook(s));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await pool.query(SCHEMA);
  const server = http.createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    // The signature is over the exact bytes: verify before parsing or re-serialising anything.
    const body = Buffer.concat(chunks).toString("utf8");
    let event;
    try {
      event = verify(webhooks, body, req.headers);
    } catch {
      res.writeHead(400).end("bad signature");
      return;
    }
    try {
      const fresh = await applyOnce(pool, req.headers["webhook-id"], event);
      res.writeHead(200, { "content-type": "text/plain" }).end(fresh ? "applied" : "duplicate");
    } catch {
      // A 5xx: the sender tries again later, with the same webhook-id.
      res.writeHead(503).end("try again");
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  return {
    url: `http://${host}:${server.address().port}/webhooks`,
    pool,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const receiver = await startWebhookReceiver({
    secrets: (process.env.WEBHOOK_SECRET ?? "").split(",").filter(Boolean),
    databaseUrl: process.env.DATABASE_URL,
    port: Number(process.env.PORT ?? 8080),
    host: process.env.HOST ?? "0.0.0.0",
  });
  console.log(`receiving webhooks at ${receiver.url}`);
}
