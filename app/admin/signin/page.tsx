import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { hasAdminSession, signInAdmin, signInOperator, signOutAdmin } from "@/server/http/admin-session";
import { SubmitButton } from "../_components/submit-button";
import "../admin.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin sign-in · Idempotent Checkout" };

async function signIn(formData: FormData) {
  "use server";
  const token = formData.get("token");
  const email = String(formData.get("email") ?? "").trim();
  // An email names an operator and the secret is theirs; without one the secret is ADMIN_TOKEN.
  const outcome =
    typeof token !== "string"
      ? { ok: false as const }
      : email
        ? await signInOperator(email, token)
        : await signInAdmin(token);
  if (!outcome.ok)
    redirect(
      outcome.retryAfterSeconds
        ? `/admin/signin?error=throttled&wait=${outcome.retryAfterSeconds}`
        : `/admin/signin?error=${email ? "operator" : "token"}`,
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
        <h1>Operator sign-in</h1>
        {signedIn ? (
          <>
            <p>
              You are signed in to the console. <Link href="/admin">Open the console</Link>.
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
                  : error === "operator"
                    ? "That email and secret do not match an operator."
                    : "That is not the admin token."}
              </p>
            )}
            <label htmlFor="email">Operator email</label>
            <input
              id="email"
              name="email"
              type="email"
              autoComplete="username"
              aria-describedby="email-hint"
              aria-invalid={error === "operator" ? true : undefined}
            />
            <p id="email-hint" className="muted">
              Left empty, the secret below is the server&apos;s <code>ADMIN_TOKEN</code> (the first owner).
            </p>
            <label htmlFor="token">Your secret, or the admin token</label>
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
              The secret an owner gave you when adding you. Signing in sets an httpOnly session cookie.
            </p>
            <SubmitButton pending="Signing in…">Sign in</SubmitButton>
          </form>
        )}
      </section>
    </div>
  );
}
