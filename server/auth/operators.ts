import { randomBytes } from "node:crypto";
import { type Db, newId } from "../db";
import { LIMIT_RULES, tally } from "../limits";
import { addressGroup } from "./client-address";
import { recordAdminRefusal } from "./refusals";
import { type AdminRole, isAdminRole } from "./roles";
import { hashToken, safeEqual } from "./tokens";

// Named operators (decision 0200). An owner creates one with a role; the person signs in with
// their email and a secret shown once (32 random bytes, so a sha256 of it is enough, as for API
// keys). Removing one, or issuing a new secret, ends their sessions in the same transaction.

export interface OperatorView {
  id: string;
  email: string;
  name: string;
  role: AdminRole;
  createdAt: string;
  createdBy: string;
  removedAt: string | null;
  removedBy: string | null;
  liveSessions: number;
}

/** How the audit log names a person: their name and email. */
export function operatorActor(operator: { name: string; email: string }): string {
  return `${operator.name} <${operator.email}>`;
}

export const OPERATOR_SECRET_PREFIX = "op_";

function newSecret(): { secret: string; secretHash: string } {
  const secret = `${OPERATOR_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { secret, secretHash: hashToken(secret) };
}

export type CreateOperatorResult =
  | { ok: true; operator: OperatorView; secret: string }
  | { ok: false; reason: "email_taken" };

/**
 * A new operator, or a removed one brought back under the same email (new secret and role); a
 * live operator's email is refused. One statement: the unique email decides between concurrent calls.
 */
export async function createOperator(
  prisma: Db,
  input: { email: string; name: string; role: AdminRole; createdBy: string },
): Promise<CreateOperatorResult> {
  const { secret, secretHash } = newSecret();
  const email = input.email.trim().toLowerCase();
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO operators (id, email, name, role, secret_hash, created_by)
    VALUES (${newId()}::uuid, ${email}, ${input.name}, ${input.role}, ${secretHash}, ${input.createdBy})
    ON CONFLICT (email) DO UPDATE
       SET name = EXCLUDED.name, role = EXCLUDED.role, secret_hash = EXCLUDED.secret_hash,
           created_at = now(), created_by = EXCLUDED.created_by, removed_at = NULL, removed_by = NULL
     WHERE operators.removed_at IS NOT NULL
    RETURNING id::text`;
  const id = rows[0]?.id;
  if (!id) return { ok: false, reason: "email_taken" };
  const operator = await findOperator(prisma, id);
  if (!operator) throw new Error("operator vanished after its insert");
  return { ok: true, operator, secret };
}

async function findOperator(prisma: Db, id: string): Promise<OperatorView | null> {
  return (await listOperators(prisma, { id }))[0] ?? null;
}

export async function listOperators(prisma: Db, where: { id?: string } = {}): Promise<OperatorView[]> {
  const now = new Date();
  const rows = await prisma.operator.findMany({
    where,
    orderBy: [{ removedAt: { sort: "desc", nulls: "first" } }, { createdAt: "asc" }],
    include: {
      _count: { select: { sessions: { where: { endedAt: null, expiresAt: { gt: now } } } } },
    },
  });
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    role: isAdminRole(r.role) ? r.role : "viewer",
    createdAt: r.createdAt.toISOString(),
    createdBy: r.createdBy,
    removedAt: r.removedAt?.toISOString() ?? null,
    removedBy: r.removedBy,
    liveSessions: r.removedAt ? 0 : r._count.sessions,
  }));
}

/** Removes a live operator and ends every session of theirs at once; whether one was removed. */
export async function removeOperator(prisma: Db, id: string, removedBy: string): Promise<boolean> {
  const [removed] = await prisma.$transaction([
    prisma.operator.updateMany({
      where: { id, removedAt: null },
      data: { removedAt: new Date(), removedBy },
    }),
    prisma.adminSession.updateMany({
      where: { operatorId: id, endedAt: null },
      data: { endedAt: new Date(), endedBy: `operator removed by ${removedBy}` },
    }),
  ]);
  return removed.count === 1;
}

export async function setOperatorRole(prisma: Db, id: string, role: AdminRole): Promise<boolean> {
  const { count } = await prisma.operator.updateMany({ where: { id, removedAt: null }, data: { role } });
  return count === 1;
}

/** A new secret for a live operator (a lost one); their sessions end with the old secret. */
export async function reissueOperatorSecret(
  prisma: Db,
  id: string,
  by: string,
): Promise<{ secret: string } | null> {
  const { secret, secretHash } = newSecret();
  const [updated] = await prisma.$transaction([
    prisma.operator.updateMany({ where: { id, removedAt: null }, data: { secretHash } }),
    prisma.adminSession.updateMany({
      where: { operatorId: id, endedAt: null },
      data: { endedAt: new Date(), endedBy: `secret reissued by ${by}` },
    }),
  ]);
  return updated.count === 1 ? { secret } : null;
}

export interface SignedInOperator {
  id: string;
  email: string;
  name: string;
  role: AdminRole;
}

export type OperatorSignInCheck =
  | { ok: true; operator: SignedInOperator }
  | { ok: false; retryAfterSeconds?: number };

/**
 * An operator's email and secret, counted against the address like a wrong ADMIN_TOKEN (the same
 * limiter, decisions 0063 and 0146): a wrong pair adds one, and past ten even a right one is
 * refused until the window ends. Refusals are in the audit log, capped (decision 0148).
 */
export async function checkOperatorSignIn(
  prisma: Db,
  email: string,
  secret: string,
  address: string,
): Promise<OperatorSignInCheck> {
  const rule = LIMIT_RULES.adminTokenFailuresByAddress;
  const row = await prisma.operator.findFirst({
    where: { email: email.trim().toLowerCase(), removedAt: null },
    select: { id: true, email: true, name: true, role: true, secretHash: true },
  });
  // Compared even without a row, so the time does not tell a known email from an unknown one.
  const matched =
    safeEqual(hashToken(secret), row?.secretHash ?? hashToken(`no operator ${secret}`)) && !!row;
  const { spent, retryAfterSeconds } = await tally(rule, addressGroup(address), matched ? 0 : 1);
  if (row && matched && spent < rule.points && isAdminRole(row.role))
    return { ok: true, operator: { id: row.id, email: row.email, name: row.name, role: row.role } };
  const throttled = spent > rule.points || (matched && spent >= rule.points);
  await recordAdminRefusal(prisma, {
    channel: "signin",
    address,
    outcome: throttled ? "throttled" : "wrong credentials",
    subject: `operator ${email.trim().toLowerCase().slice(0, 200)}`,
    firstThrottle: !matched && spent === rule.points + 1,
  });
  return throttled ? { ok: false, retryAfterSeconds } : { ok: false };
}
