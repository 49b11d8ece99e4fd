import { recordAdminAction } from "../../admin/audit";
import { clientAddress } from "../../auth/client-address";
import type { Context } from "../../context";

/**
 * Runs an admin action that changes state and records it in the audit log, whatever its end:
 * `ok` with the outcome's name, or the error's code (decision 0063).
 */
export async function audited<T>(
  ctx: Context & { adminActor: string },
  action: string,
  subject: string | null,
  run: () => Promise<T>,
  outcomeOf: (result: T) => string = () => "ok",
): Promise<T> {
  const entry = { actor: ctx.adminActor, address: clientAddress(ctx.reqHeaders), action, subject };
  try {
    const result = await run();
    await recordAdminAction(ctx.prisma, { ...entry, outcome: outcomeOf(result) });
    return result;
  } catch (error) {
    // The error's code, not its class: it may come from another copy of the module (Next's layers).
    const code = (error as { code?: unknown } | null)?.code;
    await recordAdminAction(ctx.prisma, {
      ...entry,
      outcome: `failed: ${typeof code === "string" ? code : "INTERNAL_SERVER_ERROR"}`,
    });
    throw error;
  }
}
