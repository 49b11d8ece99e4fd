import { describe, expect, it, vi } from "vitest";

/** The modules that define the branded kinds (the entry exports only some of them). */
const kinds = async () => ({
  ...(await import("./error-details.js")),
  ...(await import("./owner.js")),
  ...(await import("./middleware.js")),
});

/** Two evaluations of one module, as a Next build has one per layer. */
async function twoCopies<M>(load: () => Promise<M>): Promise<[M, M]> {
  const first = await load();
  vi.resetModules();
  return [first, await load()];
}

describe("the idempotency layer's kinds, across two copies of its modules", () => {
  it("ErrorDetails, LeaseLostError and StoredReplay made by one copy are known by the other's guards", async () => {
    const [a, b] = await twoCopies(kinds);
    const details = new a.ErrorDetails({ reason: "in_flight_at_provider" }, 2);
    const lost = new a.LeaseLostError();
    // What the bundle does to class identity:
    expect([details instanceof b.ErrorDetails, lost instanceof b.LeaseLostError]).toEqual([false, false]);

    expect(b.isErrorDetails(details)).toBe(true);
    expect(b.errorDetailsOf({ cause: details })?.retryAfterSeconds).toBe(2);
    expect(b.isLeaseLost(lost)).toBe(true);
    expect(b.isStoredReplay(new a.StoredReplay({ id: 1 }))).toBe(true);
  });

  it("the guards refuse look-alikes without the brand", () => {
    return kinds().then((m) => {
      expect(m.isErrorDetails(Object.assign(new Error("error details"), { details: {} }))).toBe(false);
      expect(m.errorDetailsOf({ cause: undefined })).toBeUndefined();
      expect(m.isLeaseLost(new Error("The idempotency key was taken over by another attempt."))).toBe(false);
      expect(m.isStoredReplay({ taken: false, take: () => null })).toBe(false);
      expect([m.isLeaseLost(null), m.isStoredReplay("replay")]).toEqual([false, false]);
    });
  });
});
