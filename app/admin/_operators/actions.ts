"use server";

import { refresh } from "next/cache";
import { adminCaller } from "@/server/http/admin-session";

export type InviteState =
  | { kind: "idle" }
  | { kind: "invited"; name: string; email: string; role: string; secret: string }
  | { kind: "refused"; message: string };

/** Adds an operator and hands their secret back once; the server keeps only its hash. */
export async function inviteOperator(_: InviteState, form: FormData): Promise<InviteState> {
  const admin = await adminCaller();
  const role = String(form.get("role") ?? "");
  try {
    const { operator, secret } = await admin.operators.invite({
      email: String(form.get("email") ?? ""),
      name: String(form.get("name") ?? ""),
      role: role === "owner" || role === "operator" ? role : "viewer",
    });
    refresh();
    return { kind: "invited", name: operator.name, email: operator.email, role: operator.role, secret };
  } catch (error) {
    const message = error instanceof Error ? error.message : "The operator could not be added.";
    return { kind: "refused", message: message.startsWith("[") ? "Check the name and the email." : message };
  }
}

export async function removeOperator(form: FormData): Promise<void> {
  const admin = await adminCaller();
  await admin.operators.remove({ id: String(form.get("id") ?? "") }).catch(() => undefined);
  refresh();
}

export async function changeOperatorRole(form: FormData): Promise<void> {
  const admin = await adminCaller();
  const role = String(form.get("role") ?? "");
  if (role === "owner" || role === "operator" || role === "viewer")
    await admin.operators.setRole({ id: String(form.get("id") ?? ""), role }).catch(() => undefined);
  refresh();
}
