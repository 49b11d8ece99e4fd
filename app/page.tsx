import { serverCaller } from "@/server/http/rsc";
import { AddToCartButton } from "./cart/add-to-cart-button";
import { formatMoney } from "./money";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const { caller, principal } = await serverCaller();
  const products = await caller.catalog.list();
  return (
    <>
      <h1>Shop</h1>
      <p className="muted">
        {principal.account
          ? `Signed in as ${principal.account.name}.`
          : "Sign in or create an account to buy."}
      </p>
      <ul className="grid" aria-label="Products" style={{ listStyle: "none", padding: 0 }}>
        {products.map((p) => (
          <li key={p.sku} className="card">
            <h2 style={{ fontSize: "1.05rem", margin: "0 0 0.25rem" }}>{p.name}</h2>
            <p className="muted" style={{ margin: 0 }}>
              {p.sku}
            </p>
            <p>{formatMoney(p.price, p.currency)}</p>
            <AddToCartButton sku={p.sku} name={p.name} />
          </li>
        ))}
      </ul>
    </>
  );
}
