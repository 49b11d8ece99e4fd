import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import {
  endAdminSession,
  hasAdminSession,
  isAdminToken,
  startAdminSession,
} from "@/server/http/admin-session";
import { SubmitButton } from "../_components/submit-button";
import "../admin.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin sign-in · Idempotent Checkout" };

async function signIn(formData: FormData) {
  "use server";
  const token = formData.get("token");
  if (typeof token !== "string" || !isAdminToken(token)) redirect("/admin/signin?error=token");
  await startAdminSession();
  redirect("/admin");
}

async function signOut() {
  "use server";
  await endAdminSession();
  redirect("/admin/signin");
}

export default async function AdminSignInPage({
  searchParams,
}: {
  searchParams: Promise<{ error?: string }>;
}) {
  const { error } = await searchParams;
  const signedIn = await hasAdminSession();
  return (
    <div className="admin">
      <section className="card signin">
        <h1>Admin sign-in</h1>
        {signedIn ? (
          <>
            <p>
              You are signed in as the admin. <Link href="/admin">Open the admin</Link>.
            </p>
            <form action={signOut}>
              <button type="submit" className="secondary">
                Sign out
              </button>
            </form>
          </>
        ) : (
          <form action={signIn} className="stack">
            {error && (
              <p role="alert" className="error">
                That is not the admin token.
              </p>
            )}
            <label htmlFor="token">Admin token</label>
            <input
              id="token"
              name="token"
              type="password"
              required
              autoComplete="current-password"
              aria-describedby="token-hint"
              aria-invalid={error ? true : undefined}
            />
            <p id="token-hint" className="muted">
              The server&apos;s <code>ADMIN_TOKEN</code>. Signing in sets an httpOnly session cookie.
            </p>
            <SubmitButton pending="Signing in…">Sign in</SubmitButton>
          </form>
        )}
      </section>
    </div>
  );
}
