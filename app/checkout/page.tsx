import { getTRPCErrorFromUnknown } from "@trpc/server";
import Link from "next/link";
import { serverCaller } from "@/server/http/rsc";
import { CheckoutView } from "./checkout-view";
import { FindCheckout } from "./find-checkout";

export const dynamic = "force-dynamic";

export default async function CheckoutPage({ searchParams }: { searchParams: Promise<{ order?: string }> }) {
  const { order: orderId } = await searchParams;
  if (!orderId) {
    return (
      <>
        <h1>Checkout</h1>
        <FindCheckout />
      </>
    );
  }
  const { caller, principal } = await serverCaller();
  if (!principal.account) {
    return (
      <>
        <h1>Checkout</h1>
        <p role="alert" className="notice notice-error">
          You are signed out. <Link href="/signin">Sign in</Link>, then open Checkout again to pay for this
          order.
        </p>
      </>
    );
  }
  const order = await caller.orders.get({ orderId }).catch((error: unknown) => {
    const { code } = getTRPCErrorFromUnknown(error);
    if (code === "NOT_FOUND" || code === "BAD_REQUEST") return null;
    throw error;
  });
  // The view heads the page itself: "Checkout" until the order is paid, then its confirmation.
  if (order) return <CheckoutView order={order} />;
  return (
    <>
      <h1>Checkout</h1>
      <p role="alert" className="notice notice-error">
        We could not find that order in your account. <Link href="/cart">Back to your cart</Link>
      </p>
    </>
  );
}
