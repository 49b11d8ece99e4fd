"use server";

import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { signIn, signOut, signUp } from "@/server/auth/accounts";
import { env } from "@/server/env";
import { DEMO_CUSTOMERS, DEMO_PASSWORD } from "@/server/seed";

export interface FormState {
  message: string;
}

function credentials(formData: FormData) {
  return { email: String(formData.get("email") ?? ""), password: String(formData.get("password") ?? "") };
}

export async function signInAction(_prev: FormState | null, formData: FormData): Promise<FormState> {
  const outcome = await signIn(await headers(), credentials(formData));
  if (!outcome.ok) return { message: outcome.message };
  redirect("/");
}

export async function signUpAction(_prev: FormState | null, formData: FormData): Promise<FormState> {
  const outcome = await signUp(await headers(), credentials(formData));
  if (!outcome.ok) return { message: outcome.message };
  // The same page whether the email was new or not: sign-up tells nobody which emails exist.
  redirect("/signin?created=1");
}

export async function signOutAction(): Promise<void> {
  await signOut(await headers());
  redirect("/signin");
}

/** Development's one-click sign-in as a seeded demo customer; production has none. */
export async function demoSignInAction(formData: FormData): Promise<void> {
  const customer = DEMO_CUSTOMERS.find((c) => c.handle === formData.get("handle"));
  if (env.isProduction || !customer) redirect("/signin");
  const outcome = await signIn(await headers(), { email: customer.email, password: DEMO_PASSWORD });
  redirect(outcome.ok ? "/" : "/signin");
}
