import type { Db } from "../db";
import type { Mismatch, MismatchKind } from "./checks";

/** Kinds decided from our books alone: every run re-derives them, whether the provider answered or not. */
const OUR_SIDE: readonly MismatchKind[] = ["succeeded_without_receipt", "stale_pending_payment"];

/** An open mismatch as stored: the finding, and since when it has been seen. */
export interface OpenMismatch extends Mismatch {
  id: string;
  firstSeenAt: string;
  lastSeenAt: string;
}

/** How many open mismatches a run re-examines and a report lists, at most. */
export const OPEN_LIMIT = 10_000;

/** The open mismatches, oldest first: what a run must look at again, and what a report shows. */
export async function openMismatches(prisma: Db): Promise<OpenMismatch[]> {
  const rows = await prisma.reconciliationMismatch.findMany({
    where: { resolvedAt: null },
    orderBy: { id: "asc" },
    take: OPEN_LIMIT,
  });
  return rows.map((r) => ({
    id: String(r.id),
    kind: r.kind as MismatchKind,
    paymentId: r.paymentId,
    chargeId: r.chargeId,
    ...(r.bookedChargeId !== null ? { bookedChargeId: r.bookedChargeId } : {}),
    detail: r.detail,
    firstSeenAt: r.firstSeenAt.toISOString(),
    lastSeenAt: r.lastSeenAt.toISOString(),
  }));
}

const sameItem = (a: Mismatch, b: Mismatch) =>
  a.kind === b.kind &&
  (a.paymentId ?? "") === (b.paymentId ?? "") &&
  (a.chargeId ?? "") === (b.chargeId ?? "");

/**
 * Records one run's findings against the open set, in one transaction. What it found is opened
 * (or seen again). An item that was open when the run started is resolved by evidence only when
 * the run re-examined it and found it fine: its kind is ours alone, or the provider answered the
 * whole run (`providerReached`), and the run's listing of that kind was not cut short. A run that
 * could not reach the provider, or another instance's run that started before an item was found,
 * never closes it.
 */
export async function recordFindings(
  prisma: Db,
  run: {
    id: string;
    openAtStart: OpenMismatch[];
    found: Mismatch[];
    providerReached: boolean;
    truncated: MismatchKind[];
  },
): Promise<void> {
  const covered = (m: Mismatch) =>
    !run.truncated.includes(m.kind) && (run.providerReached || OUR_SIDE.includes(m.kind));
  const fixed = run.openAtStart.filter((open) => covered(open) && !run.found.some((f) => sameItem(f, open)));
  // One statement, whatever the number found (PostgreSQL runs a data-modifying CTE unreferenced): under load an interactive transaction of one
  // insert per finding outlived its 5 s limit, and the operator's run answered 500.
  const found = [
    ...new Map(run.found.map((m) => [`${m.kind}\n${m.paymentId ?? ""}\n${m.chargeId ?? ""}`, m])).values(),
  ];
  await prisma.$executeRaw`
    WITH found AS (
      INSERT INTO reconciliation_mismatches (kind, payment_id, charge_id, booked_charge_id, detail, last_run_id)
      SELECT f.kind, f.payment_id, f.charge_id, f.booked_charge_id, f.detail, ${run.id}::uuid
        FROM unnest(${found.map((m) => m.kind)}::text[], ${found.map((m) => m.paymentId)}::text[],
                    ${found.map((m) => m.chargeId)}::text[], ${found.map((m) => m.bookedChargeId ?? null)}::text[],
                    ${found.map((m) => m.detail)}::text[])
             AS f(kind, payment_id, charge_id, booked_charge_id, detail)
      ON CONFLICT (kind, coalesce(payment_id, ''), coalesce(charge_id, '')) WHERE resolved_at IS NULL
      DO UPDATE SET last_seen_at = now(), detail = EXCLUDED.detail, last_run_id = EXCLUDED.last_run_id,
                    booked_charge_id = EXCLUDED.booked_charge_id
    )
    UPDATE reconciliation_mismatches
       SET resolved_at = now(), resolved_by = 'evidence', resolution = ${`re-examined by run ${run.id}: no longer true`}
     WHERE id = ANY(${fixed.map((m) => BigInt(m.id))}::bigint[]) AND resolved_at IS NULL
`;
}

/** An operator closes an open mismatch (a refund made by hand, say), recorded with who and why. */
export async function resolveByOperator(prisma: Db, id: bigint, by: string, note: string): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE reconciliation_mismatches
       SET resolved_at = now(), resolved_by = ${`operator:${by}`.slice(0, 200)}, resolution = ${note.slice(0, 1000)}
     WHERE id = ${id} AND resolved_at IS NULL`;
  return n === 1;
}
