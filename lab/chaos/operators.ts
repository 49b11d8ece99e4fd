import { callAdmin } from "./app-client";
import type { Deployment } from "./deployment";
import type { Journal, OperatorAction } from "./journal";
import type { Random } from "./random";

interface KeySummary {
  id: string;
  state: string;
  recoveryPoint: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function record(journal: Journal, action: Omit<OperatorAction, "at">): OperatorAction {
  const entry = { ...action, at: Date.now() };
  journal.operators.push(entry);
  return entry;
}

/** The keys an operator sees as unfinished on the admin page: abandoned and needs attention. */
export async function unfinishedKeys(deployment: Deployment, random: Random): Promise<KeySummary[]> {
  const keys: KeySummary[] = [];
  for (const state of ["needs_attention", "abandoned"] as const) {
    const page = await callAdmin(deployment, random, "admin.keys.list", "query", { state, limit: 100 });
    const items = (page.data as { items?: KeySummary[] } | null)?.items ?? [];
    keys.push(...items);
  }
  return keys;
}

/** "Re-drive now" on one key, as the admin page's button does. */
export async function redrive(deployment: Deployment, random: Random, journal: Journal, key: KeySummary) {
  const answer = await callAdmin(deployment, random, "admin.keys.redrive", "mutation", { id: key.id });
  const outcome = (answer.data as { outcome?: string } | null)?.outcome;
  return record(journal, {
    kind: "redrive",
    status: answer.status,
    detail: `key ${key.id} at ${key.recoveryPoint}: ${outcome ?? answer.error}`,
  });
}

/** admin.reconcile.run; `windowStart` narrows the provider listing as an operator may. */
export async function reconcile(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  input: { windowStart?: string; graceSeconds?: number } = {},
) {
  const answer = await callAdmin(deployment, random, "admin.reconcile.run", "mutation", input);
  const report = answer.data as { providerError?: string | null; mismatches?: unknown[] } | null;
  return {
    report,
    action: record(journal, {
      kind: input.windowStart ? "reconcile_narrow" : "reconcile",
      status: answer.status,
      detail: report
        ? `${report.mismatches?.length ?? 0} mismatches${report.providerError ? `, provider error: ${report.providerError}` : ""}`
        : String(answer.error),
    }),
  };
}

/** An operator at the admin pages: re-drives what looks stuck, runs the reconciler. */
export async function operate(deployment: Deployment, random: Random, journal: Journal, until: number) {
  while (Date.now() < until) {
    await sleep(random.int(2000, 6000));
    const roll = random.int(1, 100);
    if (roll <= 50) {
      const keys = await unfinishedKeys(deployment, random);
      if (keys.length > 0) await redrive(deployment, random, journal, random.pick(keys));
    } else if (roll <= 80) {
      await reconcile(deployment, random, journal, { graceSeconds: random.int(0, 30) });
    } else {
      const since = new Date(Date.now() - random.int(5, 60) * 1000).toISOString();
      await reconcile(deployment, random, journal, { windowStart: since });
    }
  }
}

/** Every unfinished key re-driven once: an operator clearing the admin page's list. */
export async function redriveAll(deployment: Deployment, random: Random, journal: Journal) {
  for (const key of await unfinishedKeys(deployment, random)) await redrive(deployment, random, journal, key);
}
