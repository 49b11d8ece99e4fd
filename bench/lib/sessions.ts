import pg from "pg";

export interface Sampler {
  /** The shares of sampled active sessions waiting on a lock, and on the WAL's write or flush. */
  stop(): Promise<{ lock: number; walFlush: number }>;
}

/** Samples pg_stat_activity of one database every 20 ms while a load runs. */
export function startWaitSampler(url: string): Sampler {
  const client = new pg.Client({ connectionString: url });
  let stopped = false;
  let active = 0;
  let waiting = 0;
  let flushing = 0;
  const loop = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query(
        `SELECT count(*) FILTER (WHERE state <> 'idle')::int AS active,
                count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting,
                -- A commit waiting for its WAL to reach disk: its own fsync, or another's.
                count(*) FILTER (WHERE (wait_event_type, wait_event) IN
                  (('LWLock', 'WALWrite'), ('IO', 'WALSync'), ('IO', 'WALWrite')))::int AS flushing
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      active += rows[0].active;
      waiting += rows[0].waiting;
      flushing += rows[0].flushing;
      await new Promise((r) => setTimeout(r, 20));
    }
    await client.end();
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { lock: active === 0 ? 0 : waiting / active, walFlush: active === 0 ? 0 : flushing / active };
    },
  };
}
