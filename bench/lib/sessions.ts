import pg from "pg";

export interface Sampler {
  /** The share of sampled active sessions that were waiting on a lock. */
  stop(): Promise<number>;
}

/** Samples pg_stat_activity of one database every 20 ms while a load runs. */
export function startLockSampler(url: string): Sampler {
  const client = new pg.Client({ connectionString: url });
  let stopped = false;
  let active = 0;
  let waiting = 0;
  const loop = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query(
        `SELECT count(*) FILTER (WHERE state <> 'idle')::int AS active,
                count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      active += rows[0].active;
      waiting += rows[0].waiting;
      await new Promise((r) => setTimeout(r, 20));
    }
    await client.end();
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return active === 0 ? 0 : waiting / active;
    },
  };
}
