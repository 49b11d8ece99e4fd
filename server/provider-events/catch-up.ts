import { sql } from "@idempotent-checkout/idempotency/sql";
import { rawQuery } from "../db";
import { errorField, logger } from "../log";
import { applyProviderEvent, EVENT_TYPES, type EventDeps } from "./apply";
import { ZProviderEvent } from "./verify";

/**
 * The events a webhook did not bring (dropped, our endpoint down or answering 503, an instance
 * killed before its 2xx), read back from the provider: the events of the acted-on types created in
 * the last `lookbackSeconds` whose delivery has not succeeded (`delivery_success=false`) and that
 * are not recorded yet, applied oldest first. Delivered events are the webhook's, so a pass costs
 * nothing when deliveries succeed; with no webhook endpoint at all the provider lists none, and the
 * completer and the reconciler (which ask the provider directly) finish what is left. Returns how
 * many it applied.
 */
export async function catchUpProviderEvents(
  deps: EventDeps,
  opts: { lookbackSeconds: number },
): Promise<number> {
  const since = new Date(Date.now() - opts.lookbackSeconds * 1000);
  const listed = [];
  for await (const raw of deps.provider.listEvents({
    createdGte: since,
    types: EVENT_TYPES,
    undelivered: true,
  })) {
    const event = ZProviderEvent.safeParse(raw);
    if (event.success) listed.push(event.data);
  }
  if (listed.length === 0) return 0;
  const known = await rawQuery<{ id: string }>(
    deps.prisma,
    sql`SELECT id FROM provider_events WHERE id = ANY(${listed.map((e) => e.id)}::text[])`,
  );
  const seen = new Set(known.map((k) => k.id));
  const missed = listed
    .filter((e) => !seen.has(e.id))
    .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  let applied = 0;
  for (const event of missed) {
    try {
      await applyProviderEvent(deps, event, "catch_up");
      applied++;
    } catch (error) {
      // The next pass lists it again.
      logger.warn(
        { eventId: event.id, err: errorField(error) },
        "provider event not applied by the catch-up",
      );
    }
  }
  return applied;
}
