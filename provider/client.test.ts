import { describe, expect, it, vi } from "vitest";
import { freePort } from "../scripts/lib/guarded-process";

describe("ProviderError across two copies of the client module", () => {
  it("an unreachable provider's error, made by one copy, is a ProviderError to the other's guard", async () => {
    const a = await import("./client");
    vi.resetModules();
    const b = await import("./client");
    const closed = await freePort();
    const client = a.httpProvider({ baseUrl: `http://127.0.0.1:${closed}`, timeoutMs: 2_000 });
    const error = await client.getCharge("ch_1").catch((e: unknown) => e);
    // Class identity fails as it does between two Next layers; the brand does not.
    expect(error instanceof b.ProviderError).toBe(false);
    expect(b.isProviderError(error)).toBe(true);
    expect(b.isProviderError(error) && error.kind).toBe("unavailable");
    expect(
      b.isProviderError(Object.assign(new Error("x"), { name: "ProviderError", kind: "rejected" })),
    ).toBe(false);
  });
});
