import { appCharges, type Invariant, succeeded } from "./types";

/** The promise itself: whatever happened, an order is charged at most once. */
export const oneChargePerOrder: Invariant = {
  name: "every order at most one succeeded charge",
  check(e) {
    const byOrder = new Map<string, string[]>();
    for (const c of appCharges(e).filter(succeeded)) {
      const order = c.metadata.order_id;
      if (order) byOrder.set(order, [...(byOrder.get(order) ?? []), c.id]);
    }
    return [...byOrder]
      .filter(([, ids]) => ids.length > 1)
      .map(([order, ids]) => ({
        invariant: this.name,
        detail: `order ${order} has ${ids.length} succeeded charges: ${ids.join(", ")}`,
      }));
  },
};
