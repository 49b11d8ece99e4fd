import { Prisma } from "../generated/prisma/client";
import type { TKeyState } from "./schemas";

/**
 * The display state of the key row aliased `k`, from its stored state and the database clock:
 * expired once past expires_at (whatever else), else completed, else in progress while the
 * lease runs, else abandoned (the lease ran out or was released and nobody took it over).
 */
export const keyStateSql = Prisma.sql`CASE
  WHEN k.expires_at <= now() THEN 'expired'
  WHEN k.state = 'completed' THEN 'completed'
  WHEN k.locked_until > now() THEN 'in_progress'
  ELSE 'abandoned' END`;

/** The same four states as WHERE conditions, each written so the key indexes can serve it. */
export function keyStateCondition(state: TKeyState): Prisma.Sql {
  switch (state) {
    case "expired":
      return Prisma.sql`k.expires_at <= now()`;
    case "completed":
      return Prisma.sql`k.expires_at > now() AND k.state = 'completed'`;
    case "in_progress":
      return Prisma.sql`k.expires_at > now() AND k.state = 'in_progress' AND k.locked_until > now()`;
    case "abandoned":
      return Prisma.sql`k.expires_at > now() AND k.state = 'in_progress'
        AND (k.locked_until IS NULL OR k.locked_until <= now())`;
  }
}
