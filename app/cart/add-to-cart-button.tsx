"use client";

import { useCart } from "@/app/_checkout/use-cart";

export function AddToCartButton({ sku, name }: { sku: string; name: string }) {
  const { lines, add } = useCart();
  const inCart = lines.find((l) => l.sku === sku)?.quantity ?? 0;
  return (
    <div className="add-to-cart">
      <button type="button" onClick={() => add(sku)}>
        Add to cart<span className="visually-hidden">: {name}</span>
      </button>
      <span role="status" className="muted small">
        {inCart > 0 ? `${inCart} in cart` : ""}
      </span>
    </div>
  );
}
