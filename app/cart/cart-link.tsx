"use client";

import Link from "next/link";
import { itemCount } from "@/app/_checkout/cart";
import { useCart } from "@/app/_checkout/use-cart";

export function CartLink() {
  const count = itemCount(useCart().lines);
  return (
    <Link href="/cart">
      Cart
      {count > 0 && (
        <span className="badge">
          {count}
          <span className="visually-hidden"> {count === 1 ? "item" : "items"}</span>
        </span>
      )}
    </Link>
  );
}
