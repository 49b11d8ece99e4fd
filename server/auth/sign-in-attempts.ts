import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";

// Wrong passwords per (email, address group), reserved before the password is checked: one
// statement counts the attempt as a failure and, when that failure earns a wait, sets it at once,
// under the row's lock. Parallel attempts therefore line up as a sequence would: a burst of 20
// gets exactly the checks 20 tries one after the other get (decision 0146). A right password
// releases the reservation. rate-limiter-flexible keeps one counter per key; this needs a count
// and a wait in one row, so it is its own small table.

/** Wrong passwords one pair may send before each further try waits. */
export const FREE_SIGN_IN_FAILURES = 3;
const MAX_SIGN_IN_DELAY_SECONDS = 15 * 60;
/** How long a pair's failures are remembered, from its first. */
const WINDOW_SECONDS = 24 * 60 * 60;

/**
 * The wait after a pair's `failures`-th wrong password: none for the first few, then 2 s, 4 s,
 * 8 s … up to 15 minutes (decision 0065). The statement below computes the same in SQL.
 */
export function signInDelaySeconds(failures: number): number {
  if (failures <= FREE_SIGN_IN_FAILURES) return 0;
  return Math.min(2 ** (failures - FREE_SIGN_IN_FAILURES), MAX_SIGN_IN_DELAY_SECONDS);
}

function waitAfter(failures: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`now() + make_interval(secs => CASE WHEN ${failures} <= ${FREE_SIGN_IN_FAILURES}::int THEN 0
    ELSE least(power(2, ${failures} - ${FREE_SIGN_IN_FAILURES}::int), ${MAX_SIGN_IN_DELAY_SECONDS}::float8) END)`;
}

export type SignInReservation = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Counts this attempt as a failure now, unless the pair must still wait (then refused, nothing counted). */
export async function reserveSignInAttempt(prisma: Db, key: string): Promise<SignInReservation> {
  const next = Prisma.sql`CASE WHEN a.expires_at <= now() THEN 1 ELSE a.failures + 1 END`;
  const reserved = await prisma.$queryRaw<{ failures: number }[]>`
    WITH swept AS (
      -- Forgotten pairs go a few at a time, never the one being counted.
      DELETE FROM sign_in_attempts WHERE key IN (
        SELECT key FROM sign_in_attempts WHERE expires_at < now() AND key <> ${key}
         LIMIT 10 FOR UPDATE SKIP LOCKED)
    )
    INSERT INTO sign_in_attempts AS a (key, failures, wait_until, expires_at)
    VALUES (${key}, 1, ${waitAfter(Prisma.sql`1`)}, now() + make_interval(secs => ${WINDOW_SECONDS}::int))
    ON CONFLICT (key) DO UPDATE SET
      failures = ${next},
      wait_until = ${waitAfter(next)},
      expires_at = CASE WHEN a.expires_at <= now() THEN EXCLUDED.expires_at ELSE a.expires_at END
    WHERE a.wait_until <= now() OR a.expires_at <= now()
    RETURNING a.failures`;
  if (reserved.length > 0) return { ok: true };
  const [wait] = await prisma.$queryRaw<{ seconds: number }[]>`
    SELECT ceil(extract(epoch FROM wait_until - now()))::int AS seconds FROM sign_in_attempts WHERE key = ${key}`;
  return { ok: false, retryAfterSeconds: Math.max(1, wait?.seconds ?? 1) };
}

/**
 * A wrong password, known: its wait starts again from now, as it would have if the failure had
 * been counted after the check (a slow check does not shorten the wait).
 */
export async function confirmSignInFailure(prisma: Db, key: string): Promise<void> {
  await prisma.$executeRaw`
    UPDATE sign_in_attempts a SET wait_until = greatest(a.wait_until, ${waitAfter(Prisma.sql`a.failures`)})
     WHERE a.key = ${key}`;
}

/** The right password: the pair's failures are forgotten, the reserved one included. */
export async function releaseSignInAttempts(prisma: Db, key: string): Promise<void> {
  await prisma.$executeRaw`DELETE FROM sign_in_attempts WHERE key = ${key}`;
}
