import { redirect } from "next/navigation";
import { serverCaller } from "@/server/http/rsc";
import { CreateKeyForm } from "./create-key-form";
import { OrderHistory } from "./order-history";
import { RevokeKeyButton } from "./revoke-key-button";
import { WebhooksSection } from "./webhooks-section";

export const dynamic = "force-dynamic";

export default async function AccountPage({ searchParams }: { searchParams: Promise<{ orders?: string }> }) {
  const { caller, principal } = await serverCaller();
  if (!principal.account) redirect("/signin");
  const { orders: cursor } = await searchParams;
  const keys = await caller.account.apiKeys.list();
  return (
    <section className="card account">
      <h1>Account</h1>
      <p className="account-name">Signed in as {principal.account.name}.</p>
      <OrderHistory caller={caller} cursor={cursor} />
      <section aria-labelledby="api-keys" className="account-section">
        <h2 id="api-keys">API keys</h2>
        <p className="muted">
          Send a key as <code>Authorization: Bearer &lt;key&gt;</code>. Keys are stored hashed and shown once;
          they cannot create, list or revoke keys.
        </p>
        {keys.length === 0 ? (
          <p>No API keys yet.</p>
        ) : (
          <ul aria-label="API keys" className="key-list">
            {keys.map((k) => (
              <li key={k.id}>
                <span>
                  <strong>{k.label}</strong>{" "}
                  <span className="muted small">
                    ({k.scope === "read_only" ? "read only" : "orders and payments"}; created{" "}
                    {k.createdAt.slice(0, 10)};{" "}
                    {k.lastUsedAt
                      ? `last used ${k.lastUsedAt.slice(0, 16).replace("T", " ")} UTC`
                      : "never used"}
                    {k.expiresAt ? `; expires ${k.expiresAt.slice(0, 10)}` : ""})
                  </span>
                </span>
                <RevokeKeyButton id={k.id} label={k.label} />
              </li>
            ))}
          </ul>
        )}
        <CreateKeyForm />
      </section>
      <WebhooksSection caller={caller} />
    </section>
  );
}
