import { describe, expect, it } from "vitest";
import { handleTrpcRequest } from "./trpc-handler";

// The checks run before authentication, so any cookie shows the cookie path.
const COOKIE = "checkout.session_token=anything";

function post(headers: Record<string, string>, body = "{}") {
  return handleTrpcRequest(
    new Request("http://shop.example/api/trpc/account.apiKeys.create", {
      method: "POST",
      headers: { host: "shop.example", ...headers },
      body,
    }),
  );
}

describe("cross-site requests to the tRPC API", () => {
  it("refuse a cookie-authenticated mutation from a foreign Origin, or none", async () => {
    const json = { "content-type": "application/json", cookie: COOKIE };
    const foreign = await post({ ...json, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.data.code).toBe("FORBIDDEN");
    expect((await post({ ...json, origin: "null" })).status).toBe(403);
    expect((await post(json)).status).toBe(403);
    // The same origin passes this check (and reaches authentication: the cookie is no session).
    expect((await post({ ...json, origin: "http://shop.example" })).status).toBe(401);
  });

  it("compare the scheme as well as the host: http://shop is another site than https://shop", async () => {
    const json = { "content-type": "application/json", cookie: COOKIE };
    expect((await post({ ...json, origin: "https://shop.example" })).status).toBe(403);
    // Behind a proxy that terminates TLS and says so, the https origin is this site.
    const behindTls = { ...json, "x-forwarded-proto": "https" };
    expect((await post({ ...behindTls, origin: "https://shop.example" })).status).toBe(401);
    expect((await post({ ...behindTls, origin: "http://shop.example" })).status).toBe(403);
  });

  it("do not apply to Bearer requests, which carry no ambient credential", async () => {
    const res = await post({ "content-type": "application/json", authorization: "Bearer sk_test_nobody" });
    expect(res.status).toBe(401);
  });

  it("refuse form-encoded, multipart and text bodies with 415", async () => {
    for (const type of [
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "text/plain",
    ]) {
      const res = await post({ "content-type": type, origin: "http://shop.example" }, "label=x");
      expect(res.status, type).toBe(415);
      expect((await res.json()).error.data.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    }
  });
});
