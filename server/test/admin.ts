import type { Principal } from "../auth/authenticate";
import { createContextInner } from "../context";
import { db } from "../db";
import type { PaymentProvider } from "../provider";
import { createCaller } from "../root";

export const ADMIN: Principal = { account: null, isAdmin: true };

/** The app's router as the admin calls it, with the given provider for charge look-ups. */
export function adminCaller(provider?: PaymentProvider) {
  return createCaller(createContextInner({ principal: ADMIN, ...(provider ? { provider } : {}) }));
}

/**
 * Inserts a key row directly, its instants relative to the database clock, to put it in any
 * state without waiting for a lease to run out.
 */
export async function insertKey(k: {
  accountId: string;
  key: string;
  state?: "in_progress" | "completed";
  /** Seconds from now; null for a released lease. */
  lockedFor?: number | null;
  expiresIn?: number;
  createdAt?: Date;
  responseStatus?: number;
  recoveryPoint?: string;
  completerAttempts?: number;
}): Promise<bigint> {
  const [row] = await db().$queryRaw<{ id: bigint }[]>`
    INSERT INTO idempotency_keys
      (account_id, key, procedure, fingerprint, request_params, state, locked_until, lease_seconds,
       response_status, response_body, expires_at, created_at, recovery_point, completer_attempts)
    VALUES (${k.accountId}::uuid, ${k.key}, 'test.procedure', ${"f".repeat(64)}, '{"amount":1}'::jsonb,
            ${k.state ?? "in_progress"},
            CASE WHEN ${k.lockedFor ?? null}::int IS NULL THEN NULL
                 ELSE now() + make_interval(secs => ${k.lockedFor ?? 0}) END,
            30, ${k.responseStatus ?? (k.state === "completed" ? 200 : null)}::int,
            CASE WHEN ${k.state ?? "in_progress"} = 'completed' THEN '{"data":{"ok":true}}'::json END,
            now() + make_interval(secs => ${k.expiresIn ?? 3600}),
            coalesce(${k.createdAt?.toISOString() ?? null}::timestamptz, now()),
            ${k.recoveryPoint ?? "started"}, ${k.completerAttempts ?? 0})
    RETURNING id`;
  if (!row) throw new Error("insert returned no row");
  return row.id;
}
