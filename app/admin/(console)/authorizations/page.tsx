import { adminCaller } from "@/server/http/admin-session";
import { AuthorizationList } from "../../_components/authorization-list";

export const dynamic = "force-dynamic";

export default async function AdminAuthorizationsPage() {
  const admin = await adminCaller();
  const items = await admin.authorizations.list({ limit: 200 });
  return (
    <>
      <header className="page-head">
        <h1>Authorizations</h1>
      </header>
      <p className="muted">
        Payments held on the shopper's card, waiting to be captured when the order ships. Uncaptured by the
        deadline, a hold is canceled and released.
      </p>
      <AuthorizationList items={items} now={Date.now()} />
    </>
  );
}
