/**
 * When to try again (decision 0186): Standard Webhooks' schedule after the immediate first
 * attempt (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each delay with ±10 % jitter so that an
 * endpoint that was down is not hit by its whole backlog at one instant.
 */
export const SPEC_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

/** The seconds before attempt `attempts + 1`, or null once the schedule is spent. */
export function retryDelaySeconds(
  attempts: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  return base * (0.9 + 0.2 * random());
}

/**
 * A `Retry-After` answer (seconds, or an HTTP date) as seconds from `now`, capped: a receiver
 * may ask us to wait, not to park a message for ever.
 */
export function retryAfterSeconds(header: string | null, now: Date, capSeconds: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  let seconds: number;
  if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    seconds = Math.max(0, (at - now.getTime()) / 1000);
  }
  return Math.min(seconds, capSeconds);
}
