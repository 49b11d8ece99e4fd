import { type Db, newId } from "../db";
import { consume, LIMIT_RULES } from "../limits";
import { logger } from "../log";
import { addressGroup } from "./client-address";

/** Where an admin credential was presented. */
export type AdminChannel = "signin" | "bearer" | "metrics" | "procedure";

/**
 * A refused admin credential or admin call, in the admin audit log with its address (decision
 * 0148): at most 20 rows per address and 500 in all per 15 minutes, so guessing cannot flood the
 * log. The first throttled try of an address is also a warning in the server's log.
 */
export async function recordAdminRefusal(
  prisma: Db,
  refusal: {
    channel: AdminChannel;
    address: string;
    outcome: string;
    subject?: string;
    /** Who it was when known (a customer's session calling an admin procedure). */
    actor?: string;
    firstThrottle?: boolean;
  },
): Promise<void> {
  const { channel, address, outcome, subject, actor = "anonymous" } = refusal;
  if (refusal.firstThrottle)
    logger.warn({ address, channel }, "admin credentials throttled for this address: too many wrong tries");
  const group = addressGroup(address);
  const mine = await consume(LIMIT_RULES.auditedRefusalsByAddress, group);
  if (!mine.ok || !(await consume(LIMIT_RULES.auditedRefusals, "all")).ok) return;
  await prisma.adminAuditEvent.create({
    data: { id: newId(), actor, address, action: `refused ${channel}`, subject: subject ?? null, outcome },
  });
}

/**
 * A signed-in person refused for their role (a viewer asking for a refund): always written, with
 * their name, for they are known and cannot flood the log anonymously (decision 0200).
 */
export async function recordRoleRefusal(
  prisma: Db,
  refusal: { actor: string; address: string; subject: string; required: string },
): Promise<void> {
  await prisma.adminAuditEvent.create({
    data: {
      id: newId(),
      actor: refusal.actor,
      address: refusal.address,
      action: "refused procedure",
      subject: refusal.subject,
      outcome: `failed: FORBIDDEN (needs ${refusal.required})`,
    },
  });
}
