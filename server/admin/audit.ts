import { type Db, newId } from "../db";
import type { Prisma } from "../generated/prisma/client";

// The audit trail of admin actions that change state (docs/decisions/0063): one row per action,
// written after it ran, with who (a session's id, or the Bearer ADMIN_TOKEN), from where, when,
// and how it ended. Shown at /admin/audit.

export interface AdminActionRecord {
  actor: string;
  address: string | null;
  action: string;
  subject?: string | null;
  outcome: string;
  detail?: Prisma.InputJsonValue;
}

export async function recordAdminAction(prisma: Db, record: AdminActionRecord): Promise<void> {
  await prisma.adminAuditEvent.create({
    data: {
      id: newId(),
      actor: record.actor,
      address: record.address,
      action: record.action,
      subject: record.subject ?? null,
      outcome: record.outcome,
      ...(record.detail !== undefined ? { detail: record.detail } : {}),
    },
  });
}

export interface AdminAuditView {
  id: string;
  at: string;
  actor: string;
  address: string | null;
  action: string;
  subject: string | null;
  outcome: string;
}

export async function listAdminAudit(prisma: Db, limit = 100): Promise<AdminAuditView[]> {
  const rows = await prisma.adminAuditEvent.findMany({ orderBy: { at: "desc" }, take: limit });
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    actor: r.actor,
    address: r.address,
    action: r.action,
    subject: r.subject,
    outcome: r.outcome,
  }));
}
