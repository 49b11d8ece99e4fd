"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { lastCheckoutOrder } from "@/app/_checkout/cart";
import { latestUnfinishedIntent } from "@/app/_checkout/intent";

/** /checkout without an order: reopen the unfinished payment, else the last order from the cart. */
export function FindCheckout() {
  const router = useRouter();
  const [nothing, setNothing] = useState(false);
  useEffect(() => {
    void latestUnfinishedIntent(() => window.localStorage).then((intent) => {
      const orderId = intent?.request.orderId ?? lastCheckoutOrder(window.localStorage);
      if (orderId) router.replace(`/checkout?order=${encodeURIComponent(orderId)}`);
      else setNothing(true);
    });
  }, [router]);
  return (
    <p role="status" className="muted">
      {nothing ? (
        <>
          Nothing to pay for yet. <Link href="/cart">Review your cart</Link> and check out from there.
        </>
      ) : (
        "Looking for your checkout…"
      )}
    </p>
  );
}
