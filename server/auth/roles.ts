/**
 * What a person of the console may do (decision 0200): a viewer reads; an operator also refunds,
 * captures, cancels, re-drives and reconciles; an owner also manages operators. ADMIN_TOKEN (the
 * first owner's bootstrap, and machines) acts as an owner.
 */
export const ADMIN_ROLES = ["viewer", "operator", "owner"] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** Whether `held` includes everything `required` may do. */
export function roleAllows(held: AdminRole, required: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(held) >= ADMIN_ROLES.indexOf(required);
}

export function isAdminRole(value: string): value is AdminRole {
  return (ADMIN_ROLES as readonly string[]).includes(value);
}
