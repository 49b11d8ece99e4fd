import { redirect } from "next/navigation";
import { db } from "@/server/db";
import { env } from "@/server/env";
import { endCustomerSession, serverCaller, startCustomerSession } from "@/server/http/rsc";

export const dynamic = "force-dynamic";

async function signIn(formData: FormData) {
  "use server";
  const handle = String(formData.get("handle") ?? "");
  const account = await db().account.findUnique({ where: { handle } });
  if (!account) redirect("/signin?error=unknown");
  await startCustomerSession(account.id);
  redirect("/");
}

async function signOut() {
  "use server";
  await endCustomerSession();
  redirect("/signin");
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  const { principal } = await serverCaller();
  // A demo sign-in: any seeded customer, no password. Production has no demo customers.
  const customers = env.isProduction
    ? []
    : await db().account.findMany({ orderBy: { handle: "asc" }, take: 20 });
  return (
    <section className="card" style={{ maxWidth: 420 }}>
      <h1>Sign in</h1>
      {principal.account && (
        <form action={signOut}>
          <p>Signed in as {principal.account.name}.</p>
          <button type="submit" className="secondary">
            Sign out
          </button>
        </form>
      )}
      {error && (
        <p role="alert" className="error">
          That customer does not exist.
        </p>
      )}
      <form action={signIn}>
        <label htmlFor="handle">Demo customer</label>
        <div style={{ display: "flex", gap: "0.5rem", marginTop: "0.5rem" }}>
          <select id="handle" name="handle" required>
            {customers.map((c) => (
              <option key={c.id} value={c.handle}>
                {c.name} ({c.handle})
              </option>
            ))}
          </select>
          <button type="submit">Sign in</button>
        </div>
      </form>
    </section>
  );
}
