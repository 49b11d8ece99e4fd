import { sql } from "@idempotent-checkout/idempotency/sql";
import { rawQuery } from "../db";
import { errorField, logger } from "../log";
import { applyProviderEvent, EVENT_TYPES, type EventDeps } from "./apply";
import { ZProviderEvent } from "./verify";

/**
 * The events a webhook did not bring (dropped, or our endpoint down past the provider's retries),
 * read back from the provider's events list: every event of the acted-on types created in the last
 * `lookbackSeconds` that is not recorded yet is applied, oldest first. Older misses are left to
 * the completer and the reconciler, which ask the provider directly. Returns how many it applied.
 */
export async function catchUpProviderEvents(
  deps: EventDeps,
  opts: { lookbackSeconds: number },
): Promise<number> {
  const since = new Date(Date.now() - opts.lookbackSeconds * 1000);
  const listed = [];
  for await (const raw of deps.provider.listEvents({ createdGte: since, types: EVENT_TYPES })) {
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
