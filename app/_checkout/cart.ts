import { z } from "zod";

/**
 * The cart: SKUs and quantities in localStorage. Prices are not kept: the catalogue shows them
 * and the server prices the order when the cart becomes one.
 */
export const MAX_QUANTITY = 99;

const ZCartLine = z.object({
  sku: z.string().min(1).max(64),
  quantity: z.number().int().min(1).max(MAX_QUANTITY),
});
const ZCart = z.array(ZCartLine);
export type TCartLine = z.infer<typeof ZCartLine>;

export type CartStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export const CART_KEY = "checkout:cart";
const CHECKOUT_ORDER_KEY = "checkout:order";

/** The stored cart; anything unreadable counts as empty. */
export function parseCart(text: string | null): TCartLine[] {
  if (text === null) return [];
  try {
    const parsed = ZCart.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

export function readCart(storage: CartStorage): TCartLine[] {
  return parseCart(storage.getItem(CART_KEY));
}

export function addToCart(storage: CartStorage, sku: string, quantity = 1): TCartLine[] {
  const lines = readCart(storage);
  const current = lines.find((l) => l.sku === sku)?.quantity ?? 0;
  return setQuantity(storage, sku, current + quantity);
}

/** Sets a line's quantity (capped at MAX_QUANTITY); 0 or less removes the line. */
export function setQuantity(storage: CartStorage, sku: string, quantity: number): TCartLine[] {
  const lines = readCart(storage);
  const wanted = Math.min(MAX_QUANTITY, Math.floor(quantity));
  const index = lines.findIndex((l) => l.sku === sku);
  if (wanted < 1) {
    if (index >= 0) lines.splice(index, 1);
  } else if (index >= 0) {
    lines[index] = { sku, quantity: wanted };
  } else {
    lines.push({ sku, quantity: wanted });
  }
  storage.setItem(CART_KEY, JSON.stringify(lines));
  return lines;
}

export function itemCount(lines: readonly TCartLine[]): number {
  return lines.reduce((sum, l) => sum + l.quantity, 0);
}

/** The cart became an order: empty it, and remember the order so the Checkout link finds it again. */
export function checkOut(storage: CartStorage, orderId: string) {
  storage.setItem(CHECKOUT_ORDER_KEY, orderId);
  storage.removeItem(CART_KEY);
}

export function lastCheckoutOrder(storage: CartStorage): string | null {
  return storage.getItem(CHECKOUT_ORDER_KEY);
}
