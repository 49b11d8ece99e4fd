import Link from "next/link";
import { SIGN_UP_DONE } from "@/server/auth/accounts";
import { env } from "@/server/env";
import { serverCaller } from "@/server/http/rsc";
import { DEMO_CUSTOMERS } from "@/server/seed";
import { demoSignInAction, signInAction } from "../_auth/actions";
import { PasswordForm } from "../_auth/password-form";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ created?: string }> }) {
  const { principal } = await serverCaller();
  const { created } = await searchParams;
  return (
    <section className="card" style={{ maxWidth: 420 }}>
      <h1>Sign in</h1>
      {created && <p role="status">{SIGN_UP_DONE}</p>}
      {principal.account && (
        <p>
          Signed in as {principal.account.name}. <Link href="/">Back to the shop</Link>
        </p>
      )}
      <PasswordForm action={signInAction} submitLabel="Sign in" />
      <p className="muted">
        New here? <Link href="/signup">Create an account</Link>
      </p>
      {/* Development only: the seeded demo customers, one click each. Production seeds none. */}
      {!env.isProduction && (
        <section aria-labelledby="demo-heading">
          <h2 id="demo-heading" style={{ fontSize: "1rem" }}>
            Demo customers
          </h2>
          <div style={{ display: "flex", gap: "0.5rem" }}>
            {DEMO_CUSTOMERS.map((c) => (
              <form key={c.handle} action={demoSignInAction}>
                <input type="hidden" name="handle" value={c.handle} />
                <button type="submit" className="secondary">
                  {c.name}
                </button>
              </form>
            ))}
          </div>
        </section>
      )}
    </section>
  );
}
