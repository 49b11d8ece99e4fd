import { DEFAULT_BACKOFF, type DriveOutcome } from "@idempotent-checkout/idempotency/admin";
import type { Sql } from "@idempotent-checkout/idempotency/sql";
import type { Db } from "../db";
import { env } from "../env";
import { type AbandonedKey, idempotency, type RecoveryBackoff } from "../keys";

export interface OperationCompleterOptions {
  backoff?: RecoveryBackoff;
  /**
   * An operation whose provider request never left is ended (nothing moved) once this long past
   * its creation, by the database's clock; one whose request may be out is re-sent with its key.
   */
  abandonAfterSeconds?: number;
  limit?: number;
  /** A write committed with the completion of the key driven (a re-drive's; see AttemptOptions). */
  alongside?: Sql;
}

/**
 * The completer of one keyed operation: its unfinished keys driven through the same phases as a
 * request (`execute`), an operator's re-drive of one key, and the backlog for a gauge. It never
 * gives up: a key that keeps failing is tried again on a capped backoff of its own.
 */
export function operationCompleter<TDeps extends { prisma: Db }>(operation: {
  procedure: string;
  /** The recovery point at which no work has begun: never driven. */
  startedPoint: string;
  execute: (deps: TDeps, key: AbandonedKey, opts: OperationCompleterOptions) => Promise<unknown>;
}) {
  const drive = (deps: TDeps, opts: OperationCompleterOptions) =>
    idempotency.completer(deps.prisma, {
      procedure: operation.procedure,
      startedPoint: operation.startedPoint,
      execute: (key) => operation.execute(deps, key, opts),
    });
  return {
    /** One pass; returns how many keys it settled. */
    complete: (deps: TDeps, opts: OperationCompleterOptions = {}) => drive(deps, opts).run(opts),
    /** "Re-drive now", whatever the backoff, recorded in the key's history. */
    redrive: (
      deps: TDeps,
      keyId: bigint,
      opts: OperationCompleterOptions & { by: string },
    ): Promise<DriveOutcome | "not_found" | "not_started"> => drive(deps, opts).redrive(keyId, opts),
    backlog: (prisma: Db) => idempotency.backlog(prisma, operation),
  };
}

/** The completers' schedule from the environment, shared by their loops and the admin's re-drive. */
export function completerOptions(): OperationCompleterOptions {
  return {
    backoff: { idleSeconds: DEFAULT_BACKOFF.idleSeconds, maxSeconds: env.COMPLETER_MAX_BACKOFF_SECONDS },
    abandonAfterSeconds: env.PAYMENT_ABANDON_AFTER_SECONDS,
  };
}
