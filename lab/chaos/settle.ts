import { callAdmin } from "./app-client";
import {
  type Books,
  countPending,
  type Report,
  readOurBooks,
  readOurEvents,
  readProviderCharges,
  readProviderEvents,
  readProviderRefunds,
} from "./books";
import type { Deployment } from "./deployment";
import type { FaultProxy } from "./fault-proxy";
import type { Journal } from "./journal";
import { type Merchants, settleMerchants } from "./merchants";
import { reconcile } from "./operators";
import type { Profile } from "./profile";
import type { Random } from "./random";
import { countWebhooksOwed, readWebhookBooks } from "./webhook-books";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * After the attack: everything up again, the held requests delivered, the completer given time
 * to finish what it can; then the reconciler with the provider, a stretch without it, and one
 * more run over a narrow window; then both sets of books.
 */
export async function settleAndRead(parts: {
  deployment: Deployment;
  proxy: FaultProxy;
  journal: Journal;
  profile: Profile;
  random: Random;
  merchants: Merchants;
}): Promise<Books> {
  const { deployment, proxy, journal, profile, random } = parts;
  if (!deployment.providerAlive())
    throw new Error("the provider process died during the attack: see its [provider] lines above");
  proxy.setDown(false);
  for (const p of [...deployment.instances, deployment.worker]) if (!p.alive()) await p.start();
  await proxy.drained();

  // The completer settles what it can; a few of its backoffs is enough once the provider is back.
  const drainUntil =
    Date.now() + (profile.abandonAfterSeconds + 8 * profile.completerMaxBackoffSeconds + 10) * 1000;
  let pending = await countPending(deployment.directDatabaseUrl);
  while (pending !== 0 && Date.now() < drainUntil) {
    await sleep(1000);
    pending = await countPending(deployment.directDatabaseUrl);
  }
  if (pending > 0)
    journal.notes.push(
      `${pending} payments, refunds, captures or cancels (or expiries due) still pending after the drain`,
    );

  const afterDrain = await reconcile(deployment, random, journal, { graceSeconds: 0 });

  // A stretch without the provider, long enough for the background reconcilers to run in it.
  const downFrom = Date.now();
  proxy.setDown(true);
  await reconcile(deployment, random, journal, { graceSeconds: 0 });
  const sawOutage = await waitForOutageReport(
    deployment,
    random,
    (profile.reconcileIntervalSeconds * 3 + 5) * 1000,
  );
  proxy.setDown(false);
  journal.providerOutages.push({ from: downFrom, to: Date.now() });
  if (!sawOutage) journal.notes.push("no reconciliation without the provider was recorded during the outage");
  // Listing only from now on: what it reports of older charges, it carried over.
  const narrow = await reconcile(deployment, random, journal, {
    windowStart: new Date().toISOString(),
    graceSeconds: 0,
  });

  // Every event the app acts on is recorded once the catch-up has run over the last of them.
  const eventsBy = Date.now() + (profile.eventsCatchUpSeconds * 3 + 15) * 1000;
  let theirEvents = await readProviderEvents(deployment.providerUrl, new Date(0));
  let ourEvents = await readOurEvents(deployment.directDatabaseUrl);
  while (Date.now() < eventsBy && theirEvents.some((e) => !ourEvents.some((o) => o.id === e.id))) {
    await sleep(1000);
    [theirEvents, ourEvents] = await Promise.all([
      readProviderEvents(deployment.providerUrl, new Date(0)),
      readOurEvents(deployment.directDatabaseUrl),
    ]);
  }

  journal.providerEvents.listed = theirEvents.length;
  const listed = new Set(theirEvents.map((e) => e.id));
  for (const o of ourEvents) if (listed.has(o.id)) journal.count(journal.providerEvents.outcomes, o.outcome);

  // The stretch without the provider may have kept an expiry (or a capture's retry) from finishing.
  const settleBy = Date.now() + (profile.completerMaxBackoffSeconds * 4 + 10) * 1000;
  while ((await countPending(deployment.directDatabaseUrl)) > 0 && Date.now() < settleBy) await sleep(1000);

  // The merchants' deliveries: every receiver up, the schedule (about 15 s) run out, twice over.
  await settleMerchants(
    parts.merchants,
    journal,
    () => countWebhooksOwed(deployment.directDatabaseUrl),
    60_000,
  );

  const [charges, providerRefunds, ours, webhooks] = await Promise.all([
    readProviderCharges(deployment.providerUrl),
    readProviderRefunds(deployment.providerUrl),
    readOurBooks(deployment.directDatabaseUrl),
    readWebhookBooks(deployment.directDatabaseUrl),
  ]);
  const pendingKeyStates = new Map<string, string>();
  for (const p of ours.payments.filter((x) => x.status === "pending" && x.keyId)) {
    const key = await callAdmin(deployment, random, "admin.keys.get", "query", { id: p.keyId });
    pendingKeyStates.set(p.id, String((key.data as { state?: string } | null)?.state ?? key.error));
  }
  return {
    charges,
    providerRefunds,
    theirEvents,
    ourEvents,
    ...ours,
    webhooks,
    reportAfterDrain: (afterDrain.report as Report | null) ?? null,
    reportAfterOutage: (narrow.report as Report | null) ?? null,
    pendingKeyStates,
  };
}

async function waitForOutageReport(deployment: Deployment, random: Random, timeoutMs: number) {
  for (const end = Date.now() + timeoutMs; Date.now() < end; ) {
    const latest = await callAdmin(deployment, random, "admin.reconcile.latest", "query", undefined);
    if ((latest.data as Report | null)?.providerError) return true;
    await sleep(500);
  }
  return false;
}
