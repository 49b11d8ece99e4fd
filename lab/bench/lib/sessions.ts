import pg from "pg";

export interface Sampler {
  /** The shares of sampled active sessions waiting on a lock, and on the WAL's write or flush. */
  stop(): Promise<{ lock: number; walFlush: number; events: Record<string, number> }>;
}

/**
 * Samples pg_stat_activity of one database every 50 ms while a load runs. The sampler is itself a
 * load on the database: every 20 ms it cost PostgreSQL about 85–90 ms of CPU a second, every 50 ms
 * about 45–60 (and `measured` leaves it out of the database's CPU per request).
 */
export function startWaitSampler(url: string): Sampler {
  const client = new pg.Client({ connectionString: url });
  let stopped = false;
  let active = 0;
  let waiting = 0;
  let flushing = 0;
  // Samples of active sessions by what they waited on ("running": on a CPU or ready for one).
  const events: Record<string, number> = {};
  const loop = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query(
        `SELECT count(*) FILTER (WHERE state <> 'idle')::int AS active,
                count(*) FILTER (WHERE state <> 'idle' AND wait_event_type = 'Lock')::int AS waiting,
                -- A commit waiting for its WAL to reach disk: its own fsync, or another's. Counted
                -- among the active only, as the shares are of active sessions (an idle one can
                -- still show its last wait, which read 200 % at one client).
                -- PostgreSQL 15 spells the IO events WALSync, WALWrite; 18 (embedded) WalSync, WalWrite.
                count(*) FILTER (WHERE state <> 'idle' AND (wait_event_type, lower(wait_event)) IN
                  (('LWLock', 'walwrite'), ('IO', 'walsync'), ('IO', 'walwrite')))::int AS flushing,
                coalesce(json_agg(coalesce(wait_event_type || ':' || wait_event, 'running'))
                  FILTER (WHERE state <> 'idle'), '[]') AS events
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      active += rows[0].active;
      waiting += rows[0].waiting;
      flushing += rows[0].flushing;
      for (const name of rows[0].events as string[]) events[name] = (events[name] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 50));
    }
    await client.end();
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const share = (n: number) => (active === 0 ? 0 : n / active);
      return {
        lock: share(waiting),
        walFlush: share(flushing),
        events: Object.fromEntries(Object.entries(events).map(([name, n]) => [name, share(n)])),
      };
    },
  };
}
