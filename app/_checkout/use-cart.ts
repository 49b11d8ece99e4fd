"use client";

import { useSyncExternalStore } from "react";
import * as cart from "./cart";

// Same-tab writes announce themselves with this event; other tabs' writes arrive as "storage".
const CART_CHANGED = "checkout:cart-changed";
const EMPTY: cart.TCartLine[] = [];

function subscribe(onChange: () => void): () => void {
  window.addEventListener("storage", onChange);
  window.addEventListener(CART_CHANGED, onChange);
  return () => {
    window.removeEventListener("storage", onChange);
    window.removeEventListener(CART_CHANGED, onChange);
  };
}

// useSyncExternalStore needs the same array back while the stored text is unchanged.
let cachedText: string | null = null;
let cachedLines: cart.TCartLine[] = EMPTY;
function snapshot(): cart.TCartLine[] {
  const text = window.localStorage.getItem(cart.CART_KEY);
  if (text !== cachedText) {
    cachedText = text;
    cachedLines = cart.parseCart(text);
  }
  return cachedLines;
}

function changed() {
  window.dispatchEvent(new Event(CART_CHANGED));
}

/** The cart in localStorage, live across components and tabs; empty while the server renders. */
export function useCart() {
  const lines = useSyncExternalStore(subscribe, snapshot, () => EMPTY);
  return {
    lines,
    add(sku: string) {
      cart.addToCart(window.localStorage, sku);
      changed();
    },
    setQuantity(sku: string, quantity: number) {
      cart.setQuantity(window.localStorage, sku, quantity);
      changed();
    },
    checkOut(orderId: string) {
      cart.checkOut(window.localStorage, orderId);
      changed();
    },
  };
}
