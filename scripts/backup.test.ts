// docs/production.md "Backup and restore", run once: payments made through a real API process,
// `pg_dump -Fc`, `pg_restore` into a new database, and the books there balance as before.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient } from "../server/db";
import { applyMigrations } from "../server/db/migrate";
import { ledgerBalances, verifyLedger } from "../server/ledger";
import { seedDemoData } from "../server/seed";
import { postPayment, startApiProcess } from "../server/test/processes";
import { freePort, type GuardedProcess, startGuarded, waitForPort } from "./lib/guarded-process";
import { findPgBinDir } from "./lib/ha-postgres";
import { startProvider } from "./lib/provider-process";

/**
 * pg_dump refuses a server of a newer major than its own, and the embedded PostgreSQL (18) ships
 * none. So the dump is taken from a server of the major of an installed pg_dump: the test's own
 * server when they match (an external DATABASE_URL), else a throwaway one from Debian's
 * PostgreSQL (the binaries the HA cluster runs). A machine with neither cannot run pg_dump at all.
 */
const DUMPABLE = await dumpableServer();

describe.skipIf(DUMPABLE === null)(
  `backup and restore${DUMPABLE === null ? " (skipped: no pg_dump of the test server's major, and no Debian PostgreSQL server: `apt-get install postgresql`)" : ""}`,
  () => {
    const cleanups: (() => unknown)[] = [];
    let serverUrl = "";
    let bin = "";
    beforeAll(async () => {
      if (!DUMPABLE) return;
      const started = await DUMPABLE.start();
      cleanups.push(started.stop);
      serverUrl = started.url;
      bin = DUMPABLE.bin;
    }, 60_000);
    afterAll(async () => {
      for (const fn of cleanups.reverse()) await fn();
    });

    it("pg_dump, pg_restore into a new database: the same payments, and the books still balance", async () => {
      const books = await createDatabase(serverUrl, "backup_books");
      const restored = await createDatabase(serverUrl, "backup_restored");
      await applyMigrations(books);
      const seed = createPrismaClient(books);
      await seedDemoData(seed, { production: false });
      await seed.$disconnect();

      const provider = await startProvider({ databaseUrl: books });
      cleanups.push(provider.stop);
      const api = await startApiProcess({ DATABASE_URL: books, PAYMENT_PROVIDER_URL: provider.url });
      cleanups.push(api.stop);
      for (const method of ["pm_card_visa", "pm_card_visa", "pm_card_declined"]) {
        const order = await fetch(`${api.url}/api/trpc/orders.create`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk_test_alice" },
          body: JSON.stringify({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }),
        });
        const orderId = ((await order.json()) as { result: { data: { id: string } } }).result.data.id;
        const paid = await postPayment(api.url, "sk_test_alice", crypto.randomUUID(), {
          orderId,
          paymentMethod: method,
        });
        expect(paid.status).toBe(method === "pm_card_visa" ? 200 : 402);
      }
      await api.stop();

      const dump = join(mkdtempSync(join(tmpdir(), "backup-")), "checkout.dump");
      cleanups.push(() => rmSync(join(dump, ".."), { recursive: true, force: true }));
      execFileSync(join(bin, "pg_dump"), ["--format=custom", `--file=${dump}`, `--dbname=${books}`]);
      execFileSync(join(bin, "pg_restore"), ["--no-owner", "--exit-on-error", `--dbname=${restored}`, dump]);

      const before = createPrismaClient(books);
      const after = createPrismaClient(restored);
      cleanups.push(
        () => before.$disconnect(),
        () => after.$disconnect(),
      );
      const [original, copy] = [await verifyLedger(before), await verifyLedger(after)];
      expect(original.balanced).toBe(true);
      expect(original.transactions).toBeGreaterThanOrEqual(2);
      expect(copy).toEqual(original);
      expect(await ledgerBalances(after)).toEqual(await ledgerBalances(before));
      const succeeded = (p: typeof before) => p.payment.count({ where: { status: "succeeded" } });
      expect(await succeeded(after)).toBe(2);
    }, 120_000);
  },
);

async function createDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const client = await connect(serverUrl);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return Object.assign(new URL(serverUrl), { pathname: `/${name}` }).href;
}

/** Connects, waiting while the server is still starting up (57P03) after it opened its port. */
async function connect(url: string): Promise<pg.Client> {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client(url);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      if ((error as { code?: string }).code !== "57P03" || attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface Dumpable {
  bin: string;
  start(): Promise<{ url: string; stop: () => Promise<void> }>;
}

function major(pgDump: string): number {
  return Number(/(\d+)/.exec(execFileSync(pgDump, ["--version"], { encoding: "utf8" }))?.[1]);
}

async function dumpableServer(): Promise<Dumpable | null> {
  const testUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (testUrl) {
    const client = await connect(testUrl);
    const { rows } = await client.query<{ v: string }>("SHOW server_version_num");
    await client.end();
    const server = Math.floor(Number(rows[0]?.v) / 10000);
    const bin = `/usr/lib/postgresql/${server}/bin`;
    if (existsSync(join(bin, "pg_dump")))
      return { bin, start: async () => ({ url: testUrl, stop: async () => {} }) };
  }
  const bin = findPgBinDir();
  if (!bin || !existsSync(join(bin, "pg_dump")) || !existsSync(join(bin, "initdb"))) return null;
  if (major(join(bin, "pg_dump")) !== major(join(bin, "postgres"))) return null;
  return { bin, start: () => throwawayServer(bin) };
}

/** Debian's PostgreSQL in a temporary directory, as the postgres user when we are root. */
async function throwawayServer(bin: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "backup-pg-"));
  chmodSync(dir, 0o755);
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o700 });
  let asPostgres: string[] = [];
  if (process.getuid?.() === 0) {
    const id = (flag: string) => execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim();
    chownSync(data, Number(id("-u")), Number(id("-g")));
    asPostgres = [`--reuid=${id("-u")}`, `--regid=${id("-g")}`, "--clear-groups", "--"];
  }
  const run = (command: string, args: string[]): [string, string[]] =>
    asPostgres.length > 0 ? ["setpriv", [...asPostgres, command, ...args]] : [command, args];
  const [initCommand, initArgs] = run(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "-A",
    "trust",
    "--no-sync",
  ]);
  const init = spawnSync(initCommand, initArgs, { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const [command, args] = run(join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "unix_socket_directories=",
    "-c",
    "fsync=off",
  ]);
  const server: GuardedProcess = startGuarded("postgres", command, [...args]);
  await waitForPort(port, server);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
