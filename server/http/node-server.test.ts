import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiServer } from "./node-server";
import { API_SECURITY_HEADERS } from "./security-headers";

let server: Server;
let port: number;
beforeAll(async () => {
  server = createApiServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});

/** One request as raw bytes, so a malformed one reaches the server as sent; the whole answer back. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => socket.end(request));
    let answer = "";
    socket.on("data", (d) => {
      answer += String(d);
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("the API tier's Node server", () => {
  it("sends the API's security headers on every answer, a 404 included", async () => {
    for (const path of ["/api/health/live", "/api/nothing"]) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      for (const { key, value } of API_SECURITY_HEADERS)
        expect([path, res.headers.get(key)]).toEqual([path, value]);
      expect(res.headers.get("content-length")).toBe(String((await res.arrayBuffer()).byteLength));
    }
  });

  it("answers 400 to a Host that makes no URL, and stays up", async () => {
    const answer = await raw("GET /api/health/live HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n");
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect((await fetch(`http://127.0.0.1:${port}/api/health/live`)).status).toBe(200);
  });

  it("closes the connection after a 413, so the refused body is not read on", async () => {
    // Declared far over the cap, and only the head sent: the answer comes before any body.
    const answer = await raw(
      "POST /api/trpc/payments.create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        `Idempotency-Key: ${crypto.randomUUID()}\r\nContent-Length: 100000000\r\n\r\n`,
    );
    const [status, ...head] = answer.split("\r\n\r\n")[0]?.split("\r\n") ?? [];
    expect(status).toBe("HTTP/1.1 413 Payload Too Large");
    expect(head.map((h) => h.toLowerCase())).toContain("connection: close");
  });
});
