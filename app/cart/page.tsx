import { serverCaller } from "@/server/http/rsc";
import { CartView } from "./cart-view";

export const dynamic = "force-dynamic";

export default async function CartPage() {
  const { caller, principal } = await serverCaller();
  const products = await caller.catalog.list();
  return (
    <>
      <h1>Your cart</h1>
      <CartView products={products} signedIn={principal.account !== null} />
    </>
  );
}
