import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../_keyed/memory-storage";
import { addToCart, checkOut, itemCount, lastCheckoutOrder, parseCart, readCart, setQuantity } from "./cart";

describe("the cart", () => {
  it("adds, increments, changes and removes lines", () => {
    const storage = new MemoryStorage();
    addToCart(storage, "MUG-01");
    addToCart(storage, "TEE-02");
    addToCart(storage, "MUG-01");
    expect(readCart(storage)).toEqual([
      { sku: "MUG-01", quantity: 2 },
      { sku: "TEE-02", quantity: 1 },
    ]);
    setQuantity(storage, "TEE-02", 5);
    setQuantity(storage, "MUG-01", 0);
    expect(readCart(storage)).toEqual([{ sku: "TEE-02", quantity: 5 }]);
    expect(itemCount(readCart(storage))).toBe(5);
  });

  it("caps a quantity at what an order accepts", () => {
    const storage = new MemoryStorage();
    setQuantity(storage, "MUG-01", 500);
    addToCart(storage, "MUG-01");
    expect(readCart(storage)).toEqual([{ sku: "MUG-01", quantity: 99 }]);
  });

  it("reads a damaged cart as empty", () => {
    expect(parseCart(null)).toEqual([]);
    expect(parseCart("nope")).toEqual([]);
    expect(parseCart(JSON.stringify([{ sku: "MUG-01", quantity: 0 }]))).toEqual([]);
  });

  it("empties itself when it becomes an order, and remembers the order", () => {
    const storage = new MemoryStorage();
    addToCart(storage, "MUG-01");
    checkOut(storage, "order-1");
    expect(readCart(storage)).toEqual([]);
    expect(lastCheckoutOrder(storage)).toBe("order-1");
  });
});
