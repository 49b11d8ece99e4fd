import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startHeartbeat } from "./heartbeat.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the lease heartbeat", () => {
  it("stop() waits for a renewal on its way, and none starts after it", async () => {
    let finish!: () => void;
    const renew = vi.fn(() => new Promise<void>((r) => (finish = r)));
    const beat = startHeartbeat(renew, { leaseSeconds: 3, maxLifeSeconds: 60 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(renew).toHaveBeenCalledTimes(1);

    let stopped = false;
    const stopping = beat.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(50);
    // The renewal may still land: the key must not be settled (released with a hold) before it.
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(5000);
    expect(renew).toHaveBeenCalledTimes(1);
  });

  it("stops renewing after the attempt's longest life, so a hung attempt loses its lease", async () => {
    const renew = vi.fn(async () => {});
    const beat = startHeartbeat(renew, { leaseSeconds: 3, maxLifeSeconds: 2.5 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(renew).toHaveBeenCalledTimes(2);
    await beat.stop();
  });

  it("never sends two renewals at once", async () => {
    const renew = vi.fn(() => new Promise<void>(() => {}));
    const beat = startHeartbeat(renew, { leaseSeconds: 3, maxLifeSeconds: 60 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(renew).toHaveBeenCalledTimes(1);
    void beat.stop();
  });
});
