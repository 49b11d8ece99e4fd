import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { hasAdminSession, signInAdmin, signOutAdmin } from "@/server/http/admin-session";
import { SubmitButton } from "../_components/submit-button";
import "../admin.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin sign-in · Idempotent Checkout" };

async function signIn(formData: FormData) {
  "use server";
  const token = formData.get("token");
  const outcome = typeof token === "string" ? await signInAdmin(token) : { ok: false as const };
  if (!outcome.ok)
    redirect(
      outcome.retryAfterSeconds
        ? `/admin/signin?error=throttled&wait=${outcome.retryAfterSeconds}`
        : "/admin/signin?error=token",
    );
  redirect("/admin");
}

async function signOut() {
  "use server";
  await signOutAdmin();
  redirect("/admin/signin");
}

export default async function AdminSignInPage({
  searchParams,
}: {
  searchParams: Promise<{ error?: string; wait?: string }>;
}) {
  const { error, wait } = await searchParams;
  const minutes = Math.max(1, Math.ceil(Number(wait ?? 60) / 60));
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
                {error === "throttled"
                  ? `Too many wrong tokens from this address. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`
                  : "That is not the admin token."}
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
