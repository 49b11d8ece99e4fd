import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../scripts/lib/guarded-process";
import { addressRefusal, WEBHOOK_EVENT_TYPES } from "../../server/webhooks";
import { callApp, problemReason } from "./app-client";
import type { Deployment } from "./deployment";
import type { ReceiverMode } from "./faults";
import type { Journal, MerchantEndpoint } from "./journal";
import { killAndRestart } from "./monkey";
import { type Restartable, receiverProcess } from "./processes";
import type { Profile } from "./profile";
import type { Random } from "./random";
import { FORBIDDEN_RECEIVER, type ReceiverSpec, readReceiverRecords, receiverFile } from "./receiver-records";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A merchant's call that changes an endpoint is retried this long (instances die under it). */
const CHANGE_DEADLINE_MS = 60_000;

/** The receivers: the pool's (never killed), the one taken down for a while, the one SIGKILLed. */
const POOL: { name: string; mode: ReceiverMode }[] = [
  { name: "steady", mode: "steady" },
  { name: "flaky", mode: "flaky" },
  { name: "slow", mode: "slow" },
  { name: "gone", mode: "gone" },
  { name: "broken", mode: "broken" },
  { name: "disabled", mode: "steady" },
  { name: "deleted", mode: "steady" },
];
const DOWN = { name: "down", mode: "steady" } as const;
const KILLED = { name: "killed", mode: "held" } as const;

export interface Merchants {
  pool: Restartable;
  down: Restartable;
  killed: Restartable;
  forbidden: Restartable;
  dir: string;
  endpoint(name: string): MerchantEndpoint;
  stop(): Promise<void>;
}

/**
 * This machine's own addresses that the guard forbids (a private interface), as URL hosts: real
 * targets. Link-local IPv6 ones need a zone a URL cannot carry, so they are left out.
 */
function forbiddenInterfaceHosts(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((i) => addressRefusal(i.address, { allowLoopback: true }) !== null && !i.scopeid)
    .map((i) => (i.family === "IPv6" ? `[${i.address}]` : i.address));
}

/**
 * Starts the merchants' receivers and registers their endpoints through the API (every event
 * type), before the attack: a registration is not idempotent, so it
 * is made while nothing is killed. The forbidden receiver listens on every interface; URLs that
 * reach it by a forbidden address are first offered to the API (each must be refused), then
 * written into the database as a name that resolved elsewhere at registration would be (DNS
 * rebinding): only the check at delivery stands between them and the receiver.
 */
export async function startMerchants(
  deployment: Deployment,
  profile: Profile,
  journal: Journal,
  random: Random,
  logDir: string,
): Promise<Merchants> {
  const dir = join(logDir, "..", "receivers");
  const spec = async (
    r: { name: string; mode: ReceiverMode },
    host = "127.0.0.1",
  ): Promise<ReceiverSpec> => ({
    ...r,
    port: await freePort(),
    host,
  });
  const pool: ReceiverSpec[] = [];
  for (const r of POOL) pool.push(await spec(r));
  const down = await spec(DOWN);
  const killed = await spec(KILLED);
  const forbidden = await spec({ name: FORBIDDEN_RECEIVER, mode: "forbidden" }, "::");
  const env = {
    ...(process.env as Record<string, string>),
    CHAOS_RECEIVER_DIR: dir,
    CHAOS_RECEIVER_SEED: String(profile.seed),
    CHAOS_RECEIVER_GONE_AFTER_MS: String(Math.round(profile.attackSeconds * 400)),
    CHAOS_RECEIVER_DELIVERY_TIMEOUT_MS: String(profile.webhookTimeoutSeconds * 1000),
  };
  const processes = {
    pool: receiverProcess({ name: "receivers", receivers: pool, env, logDir }),
    down: receiverProcess({ name: "receiver-down", receivers: [down], env, logDir }),
    killed: receiverProcess({ name: "receiver-killed", receivers: [killed], env, logDir }),
    forbidden: receiverProcess({ name: "receiver-forbidden", receivers: [forbidden], env, logDir }),
  };
  const all = Object.values(processes);
  await Promise.all(all.map((p) => p.start()));

  const m = journal.merchants;
  // The scripted accounts pay every cycle (the burst's, the held charges'): events for certain.
  const [account, other] = deployment.accounts;
  if (!account || !other) throw new Error("the checker needs accounts for its merchants");
  for (const r of [...pool, down, killed]) {
    const url = `http://127.0.0.1:${r.port}/hooks/${r.name}`;
    const sentAt = Date.now();
    const answer = await callApp(deployment, random, "/api/v1/webhook_endpoints", {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}` },
      body: { url, events: [...WEBHOOK_EVENT_TYPES] },
    });
    const id = answer.body?.id;
    const secret = answer.body?.secret;
    if (
      (answer.status !== 200 && answer.status !== 201) ||
      typeof id !== "string" ||
      typeof secret !== "string"
    )
      throw new Error(
        `registering the ${r.name} endpoint answered ${answer.status}: ${JSON.stringify(answer.body)}`,
      );
    m.endpoints.push({ name: r.name, id, accountId: account.id, url, forbidden: false });
    m.secrets.push({
      endpointId: id,
      secret,
      sentAt,
      answeredAt: Date.now(),
      overlapSeconds: null,
      tries: 1,
    });
  }

  const addresses = ["0.0.0.0", "[::]", "[::ffff:0.0.0.0]", ...forbiddenInterfaceHosts()];
  const forbiddenUrls = addresses.map((a) => `http://${a}:${forbidden.port}/hooks/forbidden`);
  for (const url of [...forbiddenUrls, "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/hooks"]) {
    const answer = await callApp(deployment, random, "/api/v1/webhook_endpoints", {
      method: "POST",
      headers: { authorization: `Bearer ${other.token}` },
      body: { url, events: [...WEBHOOK_EVENT_TYPES] },
    });
    m.forbiddenRegistrations.push({ url, status: answer.status, reason: problemReason(answer.body) });
  }
  const client = new pg.Client(deployment.directDatabaseUrl);
  await client.connect();
  try {
    for (const [i, url] of forbiddenUrls.entries()) {
      const { rows } = await client.query<{ id: string }>(
        `WITH e AS (INSERT INTO webhook_endpoints (id, account_id, url, event_types)
                    VALUES (gen_random_uuid(), $1, $2, $3) RETURNING id)
         INSERT INTO webhook_secrets (id, endpoint_id, secret)
         SELECT gen_random_uuid(), e.id, $4 FROM e
         RETURNING endpoint_id::text AS id`,
        [other.id, url, [...WEBHOOK_EVENT_TYPES], `whsec_${randomBytes(32).toString("base64")}`],
      );
      const id = rows[0]?.id;
      if (id) m.endpoints.push({ name: `forbidden-${i}`, id, accountId: other.id, url, forbidden: true });
    }
  } finally {
    await client.end();
  }
  return {
    ...processes,
    dir,
    endpoint(name) {
      const e = m.endpoints.find((x) => x.name === name);
      if (!e) throw new Error(`no endpoint ${name}`);
      return e;
    },
    async stop() {
      await Promise.all(all.map((p) => p.stop()));
    },
  };
}

/** A merchant's call on one endpoint, retried through dead instances until a 200. */
async function merchantCall(
  deployment: Deployment,
  random: Random,
  endpoint: MerchantEndpoint,
  path: string,
  init: { method: string; body?: unknown },
) {
  const token = deployment.accounts.find((a) => a.id === endpoint.accountId)?.token;
  const sentAt = Date.now();
  for (let tries = 1, until = sentAt + CHANGE_DEADLINE_MS; Date.now() < until; tries++) {
    const answer = await callApp(deployment, random, path, {
      ...init,
      headers: { authorization: `Bearer ${token}` },
    });
    if (answer.status === 200) return { sentAt, answeredAt: Date.now(), body: answer.body, tries };
    await sleep(500);
  }
  throw new Error(`${init.method} ${path} never answered 200 within ${CHANGE_DEADLINE_MS} ms`);
}

async function rotate(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  endpoint: MerchantEndpoint,
  overlapSeconds: number,
) {
  const done = await merchantCall(
    deployment,
    random,
    endpoint,
    `/api/v1/webhook_endpoints/${endpoint.id}/rotate_secret`,
    { method: "POST", body: { overlapSeconds } },
  );
  const secret = done.body?.secret;
  if (typeof secret !== "string")
    throw new Error(`a rotation answered no secret: ${JSON.stringify(done.body)}`);
  const { sentAt, answeredAt, tries } = done;
  journal.merchants.secrets.push({
    endpointId: endpoint.id,
    secret,
    sentAt,
    answeredAt,
    tries,
    overlapSeconds,
  });
}

/** The merchant disables (as the account page's switch) or deletes (the API) an endpoint. */
async function change(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  endpoint: MerchantEndpoint,
  kind: "disabled" | "deleted",
) {
  const { sentAt, answeredAt } =
    kind === "disabled"
      ? await merchantCall(deployment, random, endpoint, "/api/trpc/webhooks.setEnabled", {
          method: "POST",
          body: { id: endpoint.id, enabled: false },
        })
      : await merchantCall(deployment, random, endpoint, `/api/v1/webhook_endpoints/${endpoint.id}`, {
          method: "DELETE",
        });
  journal.merchants.changes.push({ endpointId: endpoint.id, kind, sentAt, answeredAt });
}

async function at(start: number, span: number, random: Random, from: number, to: number) {
  const when = start + random.int(Math.round(from * span), Math.round(to * span));
  await sleep(Math.max(0, when - Date.now()));
}

/**
 * The merchants during the attack, at random moments of their slots: rotations (one ending the
 * old secret at once, two with an overlap), one endpoint disabled and one deleted; the down
 * receiver stopped for a while now and then; the killed one SIGKILLed just after a request
 * arrived (it holds each answer); and the deliverers SIGKILLed while a held request is in flight.
 */
export async function merchantLoop(
  deployment: Deployment,
  merchants: Merchants,
  random: Random,
  journal: Journal,
  until: number,
): Promise<void> {
  const start = Date.now();
  const span = until - start;
  const script = (async () => {
    await at(start, span, random, 0.15, 0.3);
    await rotate(deployment, random, journal, merchants.endpoint("steady"), 0);
    await at(start, span, random, 0.3, 0.4);
    await change(deployment, random, journal, merchants.endpoint("disabled"), "disabled");
    await at(start, span, random, 0.4, 0.55);
    await rotate(deployment, random, journal, merchants.endpoint("killed"), random.int(5, 20));
    await at(start, span, random, 0.55, 0.7);
    await change(deployment, random, journal, merchants.endpoint("deleted"), "deleted");
    await at(start, span, random, 0.7, 0.85);
    await rotate(deployment, random, journal, merchants.endpoint("flaky"), random.int(5, 30));
  })();
  const outages = (async () => {
    while (Date.now() < until - 20_000) {
      await sleep(random.int(10_000, 25_000));
      await merchants.down.stop();
      journal.merchants.receiverOutages++;
      await sleep(random.int(4_000, 15_000));
      await merchants.down.start();
    }
  })();
  const killedFile = receiverFile(merchants.dir, KILLED.name);
  const size = () => {
    try {
      return statSync(killedFile).size;
    } catch {
      return 0;
    }
  };
  /** Resolves as soon as the killed receiver recorded a new request (it then holds its answer). */
  const nextRequest = async () => {
    const before = size();
    while (Date.now() < until && size() === before) await sleep(50);
    return Date.now() < until;
  };
  const receiverKills = (async () => {
    while (Date.now() < until) {
      await sleep(random.int(5_000, 15_000));
      if (!(await nextRequest())) return;
      journal.merchants.receiverKillsMidRequest++;
      await killAndRestart(merchants.killed, journal, random);
    }
  })();
  const delivererKills = (async () => {
    const deliverers = [deployment.worker, deployment.instances[0]].filter((p) => p !== undefined);
    while (Date.now() < until) {
      await sleep(random.int(15_000, 30_000));
      // Not while the second instance is down: shoppers need one.
      if (deployment.instances.slice(1).some((i) => !i.alive())) continue;
      if (!(await nextRequest())) return;
      journal.merchants.deliverersKilledMidDelivery++;
      await Promise.all(deliverers.map((p) => killAndRestart(p, journal, random)));
    }
  })();
  await Promise.all([script, outages, receiverKills, delivererKills]);
}

/**
 * After the attack: every receiver up, then the deliveries given time to finish what they owe
 * (events not yet fanned out, messages pending) for enabled endpoints; then the records read.
 */
export async function settleMerchants(
  merchants: Merchants,
  journal: Journal,
  owed: () => Promise<number>,
  timeoutMs: number,
): Promise<void> {
  for (const p of [merchants.pool, merchants.down, merchants.killed, merchants.forbidden])
    if (!p.alive()) await p.start();
  const until = Date.now() + timeoutMs;
  let left = await owed();
  while (left !== 0 && Date.now() < until) {
    await sleep(1000);
    left = await owed();
  }
  if (left > 0) journal.notes.push(`${left} webhook messages or fan-outs still owed after the settle`);
  journal.merchants.records = readReceiverRecords(merchants.dir);
}
