import { getTRPCErrorFromUnknown } from "@trpc/server";
import {
  type AbandonedCandidate,
  type AbandonedKey,
  DEFAULT_BACKOFF,
  findAbandonedKeys,
  findUnfinishedKey,
  type RecoveryBackoff,
  takeOverAbandoned,
} from "./abandoned.js";
import type { KeyDb } from "./db.js";
import { errorDetailsOf } from "./error-details.js";
import { runAsOwner } from "./middleware.js";
import { isLeaseLost } from "./owner.js";
import { recordKeyEvent } from "./store.js";

/** One procedure as its completer drives it: which keys are its own, and how to run one. */
export interface Driver<TTx = unknown> {
  procedure: string;
  /** The recovery point of a key whose attempts never began their work: never driven. */
  startedPoint: string;
  /** Runs (or resumes) the procedure's phases as the key's owner. */
  execute(key: AbandonedKey<TTx>): Promise<unknown>;
}

/** What became of one unfinished key a completer (or an operator's re-drive) drove. */
export type DriveOutcome = "settled" | "failed" | "busy";

export interface CompleterOptions {
  backoff?: RecoveryBackoff;
  limit?: number;
}

/**
 * Takes one unfinished key over (fenced, counted as a completer attempt) just before driving it,
 * and settles the key as a request would. "failed" when it is still unfinished (an unexpected
 * error, an outage, an answer that may change); "busy" when an attempt holds the key or won.
 */
async function drive<TTx>(
  db: KeyDb<TTx>,
  driver: Driver<TTx>,
  candidate: AbandonedCandidate,
  backoff: RecoveryBackoff,
  onError: (error: unknown, keyId: bigint) => void,
): Promise<DriveOutcome> {
  try {
    const taken = await takeOverAbandoned(db, candidate, backoff);
    if (!taken) return "busy";
    const result = await runAsOwner(db, taken.owner, taken.leaseSeconds, async () => {
      try {
        return { ok: true as const, data: await driver.execute(taken) };
      } catch (error) {
        // tRPC's own test of an error's kind holds across module copies (it falls back to the name).
        return { ok: false as const, error: getTRPCErrorFromUnknown(error) };
      }
    });
    // An answer that may still change (notFinal) left the key unfinished: not settled either.
    const unsettled =
      taken.owner.unsettled !== null ||
      (!result.ok &&
        (result.error.code === "INTERNAL_SERVER_ERROR" ||
          result.error.code === "SERVICE_UNAVAILABLE" ||
          errorDetailsOf(result.error)?.retryAfterSeconds !== undefined));
    return unsettled ? "failed" : "settled";
  } catch (error) {
    if (isLeaseLost(error)) return "busy";
    onError(error, candidate.id);
    return "failed";
  }
}

/**
 * The completer of one procedure: a pass over its unfinished keys (past their first phase, lease
 * run out, due by the completer's own backoff), an operator's re-drive of one key, and the backlog.
 */
export function completerFor<TTx>(
  db: KeyDb<TTx>,
  driver: Driver<TTx>,
  onError: (error: unknown, keyId: bigint) => void,
) {
  return {
    /** One pass; one key's failure never stops the others. Returns how many keys it settled. */
    async run(opts: CompleterOptions = {}): Promise<number> {
      const backoff = opts.backoff ?? DEFAULT_BACKOFF;
      const candidates = await findAbandonedKeys(db, {
        procedure: driver.procedure,
        skipRecoveryPoints: [driver.startedPoint],
        idleSeconds: backoff.idleSeconds,
        limit: opts.limit ?? 20,
      });
      let settled = 0;
      for (const candidate of candidates)
        if ((await drive(db, driver, candidate, backoff, onError)) === "settled") settled++;
      return settled;
    },
    /**
     * "Re-drive now": the completer's path at once, whatever the backoff, recorded in the key's
     * history. "not_started" for a key whose attempts never began their work: driving it would
     * start work nobody's attempt had started.
     */
    async redrive(
      keyId: bigint,
      opts: { backoff?: RecoveryBackoff; by: string },
    ): Promise<DriveOutcome | "not_found" | "not_started"> {
      const candidate = await findUnfinishedKey(db, keyId);
      if (!candidate) return "not_found";
      if (candidate.recoveryPoint === driver.startedPoint) return "not_started";
      await recordKeyEvent(db, keyId, "redrive_requested", opts.by.slice(0, 200));
      return drive(db, driver, candidate, opts.backoff ?? DEFAULT_BACKOFF, onError);
    },
  };
}
