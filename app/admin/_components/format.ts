import type { TKeyState } from "@/server/admin/schemas";

export const STATE_LABELS: Record<TKeyState, string> = {
  in_progress: "in progress",
  completed: "completed",
  needs_attention: "needs attention",
  abandoned: "abandoned",
  expired: "expired",
};

const UNITS = [
  { limit: 60, seconds: 1, unit: "s" },
  { limit: 3600, seconds: 60, unit: "min" },
  { limit: 86_400 * 2, seconds: 3600, unit: "h" },
  { limit: Number.POSITIVE_INFINITY, seconds: 86_400, unit: "d" },
] as const;

/** "in 28 s", "3 min ago": how far an instant is from the moment the page was rendered. */
export function relativeTime(iso: string, now: number): string {
  const delta = (Date.parse(iso) - now) / 1000;
  const size = Math.abs(delta);
  if (size < 1) return "now";
  const { seconds, unit } = UNITS.find((u) => size < u.limit) ?? UNITS[3];
  const n = Math.floor(size / seconds);
  return delta > 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

/** An instant in UTC to the second, as an admin comparing logs wants it. */
export function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);
