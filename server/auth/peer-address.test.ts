import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary } from "../../scripts/lib/debian-package";
import { freePort } from "../../scripts/lib/guarded-process";
import { type LoadBalancer, startHaproxy } from "../../scripts/lib/haproxy";
import { addressGroup, clientAddress } from "./client-address";

// The client's address as the app computes it (TRUSTED_PROXY_HOPS from the right of
// X-Forwarded-For), against a real Node server patched as instrumentation.ts patches Next's,
// directly and behind the HAProxy of `npm run cluster` (decisions 0064, 0145). Installed twice, as
// a process that still preloads something of its own might: the peer is appended once.

const INSTALL = new URL("./peer-address.ts", import.meta.url).pathname;
const ECHO = `const { installPeerAddress } = await import(${JSON.stringify(INSTALL)});
installPeerAddress();
installPeerAddress();
const http = await import("node:http");
http.createServer((req, res) => {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ xff: req.headers["x-forwarded-for"] ?? null }));
}).listen(Number(process.env.ECHO_PORT), "127.0.0.1", () => console.log("ready"));`;

let echo: ChildProcess;
let port: number;

async function seen(url: string, headers: Record<string, string> = {}) {
  const { xff } = (await (await fetch(url, { headers })).json()) as { xff: string };
  return {
    xff,
    hops0: clientAddress(new Headers({ "x-forwarded-for": xff }), 0),
    hops1: clientAddress(new Headers({ "x-forwarded-for": xff }), 1),
  };
}

beforeAll(async () => {
  port = await freePort();
  echo = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", ECHO], {
    env: { ...process.env, ECHO_PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => echo.stdout?.once("data", () => resolve()));
});
afterAll(() => {
  echo?.kill();
});

describe("the client's address", () => {
  it("counts trusted hops from the right and never believes what lies further left", () => {
    const h = (xff: string) => new Headers({ "x-forwarded-for": xff });
    expect(clientAddress(h("203.0.113.7"), 0)).toBe("203.0.113.7");
    expect(clientAddress(h("6.6.6.6, 203.0.113.7"), 0)).toBe("203.0.113.7");
    expect(clientAddress(h("6.6.6.6, 198.51.100.1, 10.0.0.2"), 1)).toBe("198.51.100.1");
    expect(clientAddress(h("198.51.100.1"), 1)).toBe("198.51.100.1");
    // Only a caller without HTTP has no entry at all (every server appends the peer).
    expect(clientAddress(new Headers(), 0)).toBe("in-process");
  });

  it("counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4", () => {
    expect(addressGroup("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:2:ffff::1")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:0db8:0001:0002::")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("203.0.113.7")).toBe("203.0.113.7");
  });

  it("direct: the socket's peer, whatever X-Forwarded-For the client sends", async () => {
    const url = `http://127.0.0.1:${port}/`;
    expect(await seen(url)).toMatchObject({ xff: "127.0.0.1", hops0: "127.0.0.1" });
    const spoofed = await seen(url, { "x-forwarded-for": "6.6.6.6" });
    expect(spoofed).toMatchObject({ xff: "6.6.6.6, 127.0.0.1", hops0: "127.0.0.1" });
  });

  describe("behind the cluster's HAProxy (one trusted hop)", () => {
    const haproxy = findBinary("haproxy");
    let lb: LoadBalancer | undefined;
    beforeAll(async () => {
      if (!haproxy) return;
      lb = await startHaproxy({ binary: haproxy, port: await freePort(), backends: [port], healthPath: "/" });
    });
    afterAll(async () => {
      await lb?.stop();
    });

    // Skipped only on a machine without Debian's haproxy (a laptop with nothing but Node); CI sets
    // TEST_POOLER=pgbouncer and installs haproxy, so there it always runs and fails without it.
    it.skipIf(!haproxy && process.env.TEST_POOLER !== "pgbouncer")(
      "the address HAProxy saw; a header the client sent is dropped (haproxy not installed: skipped)",
      async () => {
        const url = `http://127.0.0.1:${lb?.port}/`;
        expect(await seen(url)).toMatchObject({ xff: "127.0.0.1, 127.0.0.1", hops1: "127.0.0.1" });
        const spoofed = await seen(url, { "x-forwarded-for": "6.6.6.6" });
        expect(spoofed).toMatchObject({ xff: "127.0.0.1, 127.0.0.1", hops1: "127.0.0.1" });
        expect(spoofed.xff).not.toContain("6.6.6.6");
      },
    );
  });
});
