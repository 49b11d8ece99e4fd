import { redirect } from "next/navigation";
import { serverCaller } from "@/server/http/rsc";
import { revokeKeyAction } from "./actions";
import { CreateKeyForm } from "./create-key-form";
import { WebhooksSection } from "./webhooks-section";

export const dynamic = "force-dynamic";

export default async function AccountPage() {
  const { caller, principal } = await serverCaller();
  if (!principal.account) redirect("/signin");
  const keys = await caller.account.apiKeys.list();
  return (
    <section className="card" style={{ maxWidth: 640 }}>
      <h1>Account</h1>
      <p>Signed in as {principal.account.name}.</p>
      <h2>API keys</h2>
      <p className="muted">
        Send a key as <code>Authorization: Bearer &lt;key&gt;</code>. Keys are stored hashed and shown once;
        they cannot create, list or revoke keys.
      </p>
      {keys.length === 0 ? (
        <p>No API keys yet.</p>
      ) : (
        <ul aria-label="API keys">
          {keys.map((k) => (
            <li key={k.id} style={{ display: "flex", gap: "0.5rem", alignItems: "center" }}>
              <span>
                {k.label}{" "}
                <span className="muted">
                  ({k.scope === "read_only" ? "read only" : "orders and payments"}; created{" "}
                  {k.createdAt.slice(0, 10)};{" "}
                  {k.lastUsedAt
                    ? `last used ${k.lastUsedAt.slice(0, 16).replace("T", " ")} UTC`
                    : "never used"}
                  {k.expiresAt ? `; expires ${k.expiresAt.slice(0, 10)}` : ""})
                </span>
              </span>
              <form action={revokeKeyAction}>
                <input type="hidden" name="id" value={k.id} />
                <button type="submit" className="secondary" aria-label={`Revoke ${k.label}`}>
                  Revoke
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
      <CreateKeyForm />
      <WebhooksSection caller={caller} />
    </section>
  );
}
