"use server";

import { revalidatePath } from "next/cache";
import { serverCaller } from "@/server/http/rsc";

export type CreateKeyState = { secret: string; label: string } | { message: string } | null;

export async function createKeyAction(_prev: CreateKeyState, formData: FormData): Promise<CreateKeyState> {
  const { caller } = await serverCaller();
  try {
    const days = Number(formData.get("expiresInDays") ?? 0);
    const made = await caller.account.apiKeys.create({
      label: String(formData.get("label") ?? ""),
      scope: formData.get("scope") === "read_only" ? "read_only" : "payments",
      ...(days > 0 ? { expiresInDays: days } : {}),
    });
    revalidatePath("/account");
    return { secret: made.secret, label: made.key.label };
  } catch (error) {
    return { message: error instanceof Error ? error.message : "Could not create the key." };
  }
}

export async function revokeKeyAction(formData: FormData): Promise<void> {
  const { caller } = await serverCaller();
  await caller.account.apiKeys.revoke({ id: String(formData.get("id") ?? "") });
  revalidatePath("/account");
}
