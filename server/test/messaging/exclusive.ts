import pg from "pg";
import { directTestDatabaseUrl } from "../fixtures";

// Arbitrary, and only ever taken by these tests.
const LOCK_KEY = 0x6f7574626f78;

/**
 * Test files that run relays or consumers take turns: each one's counts of publications and
 * deliveries are then its own, even when Vitest runs files in parallel. Returns the release.
 */
export async function takeMessagingTurn(): Promise<() => Promise<void>> {
  // A session-level lock: on a session of its own (not the pooler's), with no time limit.
  const client = new pg.Client({ connectionString: directTestDatabaseUrl() });
  await client.connect();
  await client.query("SET statement_timeout = 0");
  await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
  return async () => {
    await client.end();
  };
}
