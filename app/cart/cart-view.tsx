"use client";

import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { MAX_QUANTITY } from "@/app/_checkout/cart";
import { useCart } from "@/app/_checkout/use-cart";
import { useTRPC } from "@/app/_trpc/client";
import { formatMoney } from "@/app/money";

interface Product {
  sku: string;
  name: string;
  price: number;
  currency: string;
}

export function CartView({ products, signedIn }: { products: Product[]; signedIn: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const { lines, setQuantity, checkOut } = useCart();
  const createOrder = useMutation(
    trpc.orders.create.mutationOptions({
      onSuccess(order) {
        checkOut(order.id);
        router.push(`/checkout?order=${order.id}`);
      },
    }),
  );

  const bySku = new Map(products.map((p) => [p.sku, p]));
  // A SKU gone from the catalogue cannot be ordered; it is left out rather than failing the order.
  const rows = lines.flatMap((line) => {
    const product = bySku.get(line.sku);
    return product ? [{ ...line, product }] : [];
  });
  // One subtotal per currency: an order is in one currency, so a cart of two cannot check out.
  const subtotals = new Map<string, number>();
  for (const r of rows)
    subtotals.set(
      r.product.currency,
      (subtotals.get(r.product.currency) ?? 0) + r.product.price * r.quantity,
    );
  const mixed = subtotals.size > 1;

  if (createOrder.isSuccess) return <p role="status">Opening checkout…</p>;
  if (rows.length === 0) {
    return (
      <p className="card">
        Your cart is empty. <Link href="/">Browse the shop</Link>
      </p>
    );
  }

  return (
    <div className="card cart">
      <table className="line-items">
        <caption className="visually-hidden">Items in your cart</caption>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Quantity</th>
            <th scope="col" className="num">
              Price
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ sku, quantity, product }) => (
            <tr key={sku}>
              <td>
                {product.name}
                <span className="unit-price">{formatMoney(product.price, product.currency)} each</span>
              </td>
              <td>
                <div className="qty">
                  <label className="visually-hidden" htmlFor={`qty-${sku}`}>
                    Quantity of {product.name}
                  </label>
                  <input
                    id={`qty-${sku}`}
                    type="number"
                    inputMode="numeric"
                    min={1}
                    max={MAX_QUANTITY}
                    value={quantity}
                    onChange={(e) => {
                      const value = e.currentTarget.valueAsNumber;
                      if (Number.isFinite(value) && value >= 1) setQuantity(sku, value);
                    }}
                  />
                  <button
                    type="button"
                    className="secondary small-button"
                    onClick={() => setQuantity(sku, 0)}
                  >
                    Remove<span className="visually-hidden"> {product.name}</span>
                  </button>
                </div>
              </td>
              <td className="num">{formatMoney(product.price * quantity, product.currency)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={2}>
              Subtotal
            </th>
            <td className="num" data-testid="cart-subtotal">
              {[...subtotals].map(([currency, minor]) => formatMoney(minor, currency)).join(" + ")}
            </td>
          </tr>
        </tfoot>
      </table>
      {mixed && (
        <p role="alert" className="notice notice-error" data-testid="cart-mixed-currencies">
          An order is in one currency, and your cart holds {[...subtotals.keys()].join(" and ")}: remove the
          items of one to check out, and order them separately.
        </p>
      )}
      {createOrder.isError && (
        <p role="alert" className="notice notice-error">
          We could not create your order: {createOrder.error.message} Please try again.
        </p>
      )}
      <div className="actions">
        <Link href="/">Continue shopping</Link>
        {signedIn ? (
          <button
            type="button"
            disabled={createOrder.isPending || mixed}
            onClick={() =>
              createOrder.mutate({ items: rows.map(({ sku, quantity }) => ({ sku, quantity })) })
            }
          >
            {createOrder.isPending ? "Creating your order…" : "Proceed to checkout"}
          </button>
        ) : (
          <Link className="button" href="/signin">
            Sign in to check out
          </Link>
        )}
      </div>
    </div>
  );
}
