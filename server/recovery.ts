import { getTRPCErrorFromUnknown } from "@trpc/server";
import type { Db } from "./db";
import { errorDetailsOf } from "./errors";
import {
  type AbandonedCandidate,
  type AbandonedKey,
  DEFAULT_BACKOFF,
  findAbandonedKeys,
  findUnfinishedKey,
  isLeaseLost,
  type RecoveryBackoff,
  recordKeyEvent,
  runAsOwner,
  takeOverAbandoned,
} from "./keys";
import { errorField, logger } from "./log";

/** What became of one unfinished key a completer (or an operator's re-drive) drove. */
export type DriveOutcome = "settled" | "failed" | "busy";

/**
 * Takes one unfinished key over (fenced, counted as a completer attempt) just before driving it
 * through `execute`, the procedure's own phases, and settles the key as a request would. "failed"
 * when it is still unfinished (an unexpected error, an outage, an answer that may change); "busy"
 * when an attempt holds the key or won the race. Shared by every procedure's completer.
 */
export async function driveUnfinishedKey(
  prisma: Db,
  candidate: AbandonedCandidate,
  backoff: RecoveryBackoff,
  execute: (key: AbandonedKey) => Promise<unknown>,
  job = "completer",
): Promise<DriveOutcome> {
  try {
    const taken = await takeOverAbandoned(prisma, candidate, backoff);
    if (!taken) return "busy";
    const result = await runAsOwner(prisma, taken.owner, taken.leaseSeconds, async () => {
      try {
        return { ok: true as const, data: await execute(taken) };
      } catch (error) {
        // tRPC's own test of an error's kind holds across module copies (it falls back to the name).
        return { ok: false as const, error: getTRPCErrorFromUnknown(error) };
      }
    });
    // Not stored, so still unfinished: an unexpected error, an outage, or an answer that may change.
    const unsettled =
      !result.ok &&
      (result.error.code === "INTERNAL_SERVER_ERROR" ||
        result.error.code === "SERVICE_UNAVAILABLE" ||
        errorDetailsOf(result.error)?.retryAfterSeconds !== undefined);
    return unsettled ? "failed" : "settled";
  } catch (error) {
    if (isLeaseLost(error)) return "busy";
    logger.warn({ job, keyId: String(candidate.id), err: errorField(error) }, "key failed");
    return "failed";
  }
}

/** A procedure as its completer sees it: which keys are its own, and how to drive one. */
export interface Recoverable {
  procedure: string;
  /** The recovery point of a key whose attempts never began their work: never driven. */
  startedPoint: string;
  /** Runs (or resumes) the procedure's phases as the key's owner. */
  execute(key: AbandonedKey): Promise<unknown>;
  /** The job's name in the log. */
  job: string;
}

/**
 * One completer pass over `r`'s unfinished keys (past their first phase, lease run out, due by
 * the completer's own backoff): each is taken over just before it is driven, and one key's
 * failure never stops the others. Returns how many keys it settled.
 */
export async function completeAbandonedKeys(
  prisma: Db,
  r: Recoverable,
  opts: { backoff?: RecoveryBackoff; limit?: number } = {},
): Promise<number> {
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  const candidates = await findAbandonedKeys(prisma, {
    procedure: r.procedure,
    skipRecoveryPoints: [r.startedPoint],
    idleSeconds: backoff.idleSeconds,
    limit: opts.limit ?? 20,
  });
  let settled = 0;
  for (const candidate of candidates) {
    if ((await driveUnfinishedKey(prisma, candidate, backoff, r.execute, r.job)) === "settled") settled++;
  }
  return settled;
}

/**
 * An operator's "re-drive now" of one key: the completer's path, at once, whatever the backoff,
 * recorded in the key's history. "not_started" for a key whose attempts never began their work
 * (nothing exists, nothing was sent: driving it would start work nobody's attempt had started).
 */
export async function redriveKey(
  prisma: Db,
  r: Recoverable,
  keyId: bigint,
  opts: { backoff?: RecoveryBackoff; by: string },
): Promise<DriveOutcome | "not_found" | "not_started"> {
  const candidate = await findUnfinishedKey(prisma, keyId);
  if (!candidate) return "not_found";
  if (candidate.recoveryPoint === r.startedPoint) return "not_started";
  await recordKeyEvent(prisma, keyId, "redrive_requested", opts.by.slice(0, 200));
  return driveUnfinishedKey(prisma, candidate, opts.backoff ?? DEFAULT_BACKOFF, r.execute, r.job);
}
