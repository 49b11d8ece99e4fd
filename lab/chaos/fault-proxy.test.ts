import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type Fault, type FaultProxy, startFaultProxy } from "./fault-proxy";

/** A stand-in provider that counts what reached it. */
async function target() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push(body);
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: `pi_${seen.length}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => server.close(),
  };
}

const charge = (proxy: FaultProxy) =>
  fetch(`${proxy.url}/v1/payment_intents`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "amount=100&currency=eur&metadata[payment_id]=p1",
  });

describe("the fault proxy", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  async function proxyWith(fault: Fault) {
    const provider = await target();
    const faults: [string, string | null][] = [];
    const proxy = await startFaultProxy({
      target: provider.url,
      decide: () => fault,
      onFault: (kind, paymentId) => faults.push([kind, paymentId]),
    });
    cleanups.push(() => proxy.stop(), provider.close);
    return { proxy, provider, faults };
  }

  it("refuses before the provider sees anything", async () => {
    const { proxy, provider, faults } = await proxyWith({ kind: "error_before", status: 503 });
    const res = await charge(proxy);
    expect([res.status, res.headers.get("retry-after"), provider.seen.length]).toEqual([503, "1", 0]);
    expect(faults).toEqual([["error_before", "p1"]]);
  });

  it("resets the connection after the provider answered", async () => {
    const { proxy, provider } = await proxyWith({ kind: "reset_after_commit" });
    await expect(charge(proxy)).rejects.toThrow();
    expect(provider.seen).toHaveLength(1);
  });

  it("holds a request past the caller's patience and delivers it afterwards", async () => {
    const { proxy, provider } = await proxyWith({ kind: "hold", ms: 2000 });
    await expect(
      fetch(`${proxy.url}/v1/payment_intents`, {
        method: "POST",
        body: "",
        signal: AbortSignal.timeout(300),
      }),
    ).rejects.toThrow();
    await expect.poll(() => proxy.held()).toBe(1);
    expect(provider.seen).toHaveLength(0);
    await proxy.drained();
    expect(provider.seen).toHaveLength(1);
  });

  it("answers every call 503 while the provider is down, and passes them again after", async () => {
    const { proxy, provider } = await proxyWith({ kind: "none" });
    proxy.setDown(true);
    expect((await charge(proxy)).status).toBe(503);
    proxy.setDown(false);
    expect((await charge(proxy)).status).toBe(201);
    expect(provider.seen).toHaveLength(1);
  });
});
