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

/** One request as raw bytes, so a malformed one reaches the server as sent; its status line back. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => socket.end(request));
    let answer = "";
    socket.on("data", (d) => {
      answer += String(d);
    });
    socket.on("end", () => resolve(answer.split("\r\n")[0] ?? ""));
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
    expect(await raw("GET /api/health/live HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n")).toBe(
      "HTTP/1.1 400 Bad Request",
    );
    expect((await fetch(`http://127.0.0.1:${port}/api/health/live`)).status).toBe(200);
  });
});
