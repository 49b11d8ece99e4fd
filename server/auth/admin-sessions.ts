import { createHmac, randomBytes } from "node:crypto";
import { type Db, newId } from "../db";
import { operatorActor, type SignedInOperator } from "./operators";
import { type AdminRole, isAdminRole } from "./roles";
import { hashToken } from "./tokens";

// Admin sign-ins as rows (docs/decisions/0063): the cookie carries 32 random bytes, the row their
// hash and a fingerprint of the ADMIN_TOKEN they were made with. Sign-out or an operator ends a
// row; a new ADMIN_TOKEN ends them all, since no row carries its fingerprint. A named operator's
// session (decision 0200) does not hang on ADMIN_TOKEN: it lives while its operator is not removed.

export const ADMIN_SESSION_HOURS = 12;

/** `__Host-`: Secure, the whole site, and no Domain, so no sibling subdomain can set or read it. */
export function adminCookieName(production: boolean): string {
  return production ? "__Host-checkout_admin" : "checkout_admin";
}

export function adminCookieOptions(production: boolean) {
  return {
    httpOnly: true,
    sameSite: "lax" as const,
    secure: production,
    path: "/",
    maxAge: ADMIN_SESSION_HOURS * 60 * 60,
  };
}

/** Names which ADMIN_TOKEN made a session without revealing anything of the token. */
export function adminTokenFingerprint(adminToken: string): string {
  return createHmac("sha256", adminToken).update("checkout admin session").digest("base64url");
}

export async function createAdminSession(
  prisma: Db,
  opts: { adminToken: string; address: string; userAgent: string | null; operatorId?: string },
): Promise<{ id: string; token: string }> {
  const token = randomBytes(32).toString("base64url");
  const id = newId();
  await prisma.adminSession.create({
    data: {
      id,
      tokenHash: hashToken(token),
      tokenFingerprint: adminTokenFingerprint(opts.adminToken),
      ipAddress: opts.address,
      userAgent: opts.userAgent?.slice(0, 256) ?? null,
      operatorId: opts.operatorId ?? null,
      expiresAt: new Date(Date.now() + ADMIN_SESSION_HOURS * 60 * 60 * 1000),
    },
  });
  return { id, token };
}

export interface LiveAdminSession {
  id: string;
  /** Who the audit log names: the operator, or the session of ADMIN_TOKEN. */
  actor: string;
  role: AdminRole;
  operator: SignedInOperator | null;
}

/**
 * The live session of a cookie's token, in one statement: not ended, not expired, and either an
 * operator's who is not removed or made with today's ADMIN_TOKEN.
 */
export async function adminSessionFor(
  prisma: Db,
  token: string | undefined,
  adminToken: string,
): Promise<LiveAdminSession | null> {
  if (!token) return null;
  const row = await prisma.adminSession.findFirst({
    where: {
      tokenHash: hashToken(token),
      endedAt: null,
      expiresAt: { gt: new Date() },
      OR: [
        { operatorId: null, tokenFingerprint: adminTokenFingerprint(adminToken) },
        { operator: { removedAt: null } },
      ],
    },
    select: { id: true, operator: { select: { id: true, email: true, name: true, role: true } } },
  });
  if (!row) return null;
  const op = row.operator;
  if (!op) return { id: row.id, actor: `session ${row.id}`, role: "owner", operator: null };
  const role = isAdminRole(op.role) ? op.role : "viewer";
  return { id: row.id, actor: operatorActor(op), role, operator: { ...op, role } };
}

/** Ends one session (sign-out, or an operator); whether it was live. */
export async function endAdminSession(prisma: Db, id: string, endedBy: string): Promise<boolean> {
  const { count } = await prisma.adminSession.updateMany({
    where: { id, endedAt: null },
    data: { endedAt: new Date(), endedBy },
  });
  return count === 1;
}

export interface AdminSessionView {
  id: string;
  address: string | null;
  userAgent: string | null;
  createdAt: string;
  expiresAt: string;
  /** The operator's name and email; null for a session of ADMIN_TOKEN. */
  operator: string | null;
  operatorId: string | null;
  /** Ended by sign-out or an operator, expired, or made with an earlier ADMIN_TOKEN. */
  live: boolean;
  endedAt: string | null;
  endedBy: string | null;
}

export async function listAdminSessions(
  prisma: Db,
  adminToken: string,
  limit = 50,
): Promise<AdminSessionView[]> {
  const fingerprint = adminTokenFingerprint(adminToken);
  const now = new Date();
  const rows = await prisma.adminSession.findMany({
    orderBy: { createdAt: "desc" },
    take: limit,
    include: { operator: { select: { name: true, email: true, removedAt: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    operator: r.operator ? operatorActor(r.operator) : null,
    operatorId: r.operatorId,
    address: r.ipAddress,
    userAgent: r.userAgent,
    createdAt: r.createdAt.toISOString(),
    expiresAt: r.expiresAt.toISOString(),
    live:
      !r.endedAt &&
      r.expiresAt > now &&
      (r.operator ? !r.operator.removedAt : r.tokenFingerprint === fingerprint),
    endedAt: r.endedAt?.toISOString() ?? null,
    endedBy: r.endedBy ?? (!r.operator && r.tokenFingerprint !== fingerprint ? "ADMIN_TOKEN rotated" : null),
  }));
}
