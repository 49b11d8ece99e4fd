import type { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { brandGuard } from "./brand.js";
import type { KeyDb } from "./db.js";
import { deriveKey } from "./derived-key.js";
import { errorDetailsOf } from "./error-details.js";
import { completeKey, completeKeyWith, recordProgress, type StatementWrites } from "./store.js";

const LEASE_LOST = Symbol.for("idempotent-checkout.idempotency.LeaseLostError");

/** Thrown when the key was taken over: this attempt's writes must not commit. */
export class LeaseLostError extends Error {
  readonly [LEASE_LOST] = true;
  constructor() {
    super("The idempotency key was taken over by another attempt.");
  }
}

export const isLeaseLost = brandGuard<LeaseLostError>(LEASE_LOST);

/** A stored response: the tRPC data of a success, or the code and message of a business error. */
export type StoredResponse =
  | { data: unknown }
  | { error: { code: TRPCError["code"]; message: string; details?: Record<string, unknown> } };

// What JSON makes of a value is what the client receives: store exactly that.
function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

export function storedError(error: TRPCError): { status: number; body: StoredResponse } {
  const found = errorDetailsOf(error)?.details;
  const details = found ? (toJson(found) as Record<string, unknown>) : undefined;
  return {
    status: getHTTPStatusCodeFromError(error),
    body: { error: { code: error.code, message: error.message, ...(details ? { details } : {}) } },
  };
}

/**
 * The handler's side of an owned key: atomic phases that record recovery points, and the final
 * transaction in which the business writes and the key's completion commit together. Every
 * transaction is fenced by the attempt's token, so a stale owner's writes roll back.
 */
export class KeyOwner<TTx = unknown> {
  /** Set once the key is completed through complete() or fail(). */
  completed: { data: unknown } | { error: TRPCError } | null = null;
  /** Set by notFinal(): the answer is returned, not stored, and the key given back. */
  unsettled: { retryAfterSeconds: number } | null = null;

  constructor(
    private readonly db: KeyDb<TTx>,
    readonly keyId: bigint,
    readonly fence: number,
    private point: string,
    private readonly scope: string,
    private readonly transactionTimeoutMs: number,
    /** What the declared first phase returned when it committed with the claim. */
    private readonly firstPhase?: { recoveryPoint: string; value: unknown },
    /** The procedure that claimed the key: the outcomes of this attempt are counted under it. */
    readonly procedure = "",
  ) {}

  /**
   * The value of the phase that ended at `recoveryPoint`, when this attempt ran it with the
   * claim; undefined otherwise (a takeover resumes without it and reads what it needs).
   */
  phaseResult<T>(recoveryPoint: string): T | undefined {
    return this.firstPhase?.recoveryPoint === recoveryPoint ? (this.firstPhase.value as T) : undefined;
  }

  /**
   * This attempt's answer is a success that may still change (a payment awaiting the customer's
   * authentication): it is returned but not stored, and the key is released, held for
   * `retryAfterSeconds`, so a retry with the same key asks again.
   */
  notFinal(retryAfterSeconds: number): void {
    this.unsettled = { retryAfterSeconds };
  }

  /** Where the previous attempts got to: "started" for a fresh key. */
  get recoveryPoint(): string {
    return this.point;
  }

  /**
   * A key for a downstream call (a payment provider) derived from this key: stable across
   * retries and takeovers, different for each purpose, and revealing nothing of the client's key.
   */
  derivedKey(purpose: string): string {
    return deriveKey(this.scope, this.keyId, purpose);
  }

  /** One transaction: fn's writes, then the new recovery point (which also renews the lease). */
  async atomicPhase<T>(nextRecoveryPoint: string, fn: (tx: TTx) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(
      async (tx) => {
        const value = await fn(tx);
        if (!(await recordProgress(this.db, tx, this.keyId, this.fence, nextRecoveryPoint)))
          throw new LeaseLostError();
        return value;
      },
      { timeoutMs: this.transactionTimeoutMs },
    );
    this.point = nextRecoveryPoint;
    return result;
  }

  /** The last phase: fn's writes and the key's completion with fn's result commit together. */
  async complete<T>(fn: (tx: TTx) => Promise<T>): Promise<T> {
    const data = await this.db.transaction(
      async (tx) => {
        const value = toJson(await fn(tx));
        const body = JSON.stringify({ data: value } satisfies StoredResponse);
        if (!(await completeKey(this.db, tx, this.keyId, this.fence, 200, body))) throw new LeaseLostError();
        return value;
      },
      { timeoutMs: this.transactionTimeoutMs },
    );
    this.completed = { data };
    return data as T;
  }

  /**
   * The last phase as one statement: the handler's writes (data-modifying CTEs and requirements
   * added to the statement builder, known before they run) and the key's completion with `data`
   * commit together in one round trip. A failed requirement throws a RequirementFailedError
   * (`isRequirementFailure`); a fenced one, or a lost fence, a LeaseLostError.
   */
  async completeWith<T>(writes: StatementWrites, data: T): Promise<T> {
    const value = toJson(data);
    const body = JSON.stringify({ data: value } satisfies StoredResponse);
    if (!(await completeKeyWith(this.db, this.keyId, this.fence, 200, body, writes)))
      throw new LeaseLostError();
    this.completed = { data: value };
    return value as T;
  }

  /** A business outcome that is an error (a declined card): stored and replayed like a success. */
  async fail(error: TRPCError, fn?: (tx: TTx) => Promise<unknown>): Promise<never> {
    const { status, body } = storedError(error);
    await this.db.transaction(
      async (tx) => {
        await fn?.(tx);
        if (!(await completeKey(this.db, tx, this.keyId, this.fence, status, JSON.stringify(body)))) {
          throw new LeaseLostError();
        }
      },
      { timeoutMs: this.transactionTimeoutMs },
    );
    this.completed = { error };
    throw error;
  }
}
