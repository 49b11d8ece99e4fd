import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressPolicy, ResolvedAddress } from "./address-guard";
import { sendWebhook } from "./send";

// A name no DNS knows: only the guard's own resolution (below) turns it into an address, so a
// request that reached the receiver connected to the pinned address, not to a second lookup.
const NAME = "hooks.merchant.invalid";
const dir = mkdtempSync(join(tmpdir(), "webhook-tls-"));

/** A self-signed certificate (its own trust anchor) for `name`, made by openssl. */
function certificateFor(name: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      "-addext",
      `subjectAltName=DNS:${name}`,
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
}

/** An HTTPS receiver on 127.0.0.1 only, presenting `cert`; it records the SNI name of each request. */
async function httpsReceiver(tls: { key: string; cert: string }) {
  const seen: { servername: string | false | null; localAddress: string | undefined }[] = [];
  const server = https.createServer(tls, (req, res) => {
    const socket = req.socket as TLSSocket;
    seen.push({ servername: socket.servername, localAddress: socket.localAddress });
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as AddressInfo).port, seen, close: () => server.close() };
}

const lookups: string[] = [];
const policy: AddressPolicy = {
  requireHttps: true,
  allowLoopback: true,
  resolve: async (hostname): Promise<ResolvedAddress[]> => {
    lookups.push(hostname);
    return [{ address: "127.0.0.1", family: 4 }];
  },
};
const send = (port: number, ca: string) =>
  sendWebhook(`https://${NAME}:${port}/hooks`, { "webhook-id": "msg_tls" }, "{}", {
    policy,
    timeoutMs: 5_000,
    ca,
  });

let theirs: { key: string; cert: string };
let other: { key: string; cert: string };
beforeAll(() => {
  theirs = certificateFor(NAME);
  other = certificateFor("someone-else.invalid");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a delivery over TLS to the pinned address", () => {
  it("connects to the address it checked and verifies the certificate against the URL's host name", async () => {
    const receiver = await httpsReceiver(theirs);
    try {
      lookups.length = 0;
      const result = await send(receiver.port, theirs.cert);
      expect(result).toMatchObject({ status: 204 });
      // One resolution, the guard's: the connection went to its answer, with the name as SNI.
      expect(lookups).toEqual([NAME]);
      expect(receiver.seen).toEqual([{ servername: NAME, localAddress: "127.0.0.1" }]);
    } finally {
      receiver.close();
    }
  });

  it("refuses a certificate for another name at that address, and sends nothing", async () => {
    const receiver = await httpsReceiver(other);
    try {
      // Both certificates trusted: only the name can refuse it.
      const result = await send(receiver.port, `${theirs.cert}\n${other.cert}`);
      expect(result.status).toBeNull();
      expect(result.excerpt).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
      expect(receiver.seen).toEqual([]);
    } finally {
      receiver.close();
    }
  });
});
