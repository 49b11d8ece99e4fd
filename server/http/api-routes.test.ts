import { describe, expect, it } from "vitest";
import { routeApiRequest } from "./api-routes";

const at = (path: string, method = "GET") =>
  routeApiRequest(new Request(`http://app.test${path}`, { method }));

describe("the API tier's routes, as Next's router answers them", () => {
  it("answers a route by its path and method, HEAD as GET", async () => {
    expect((await at("/api/health/live")).status).toBe(200);
    expect(await (await at("/api/health/live")).json()).toEqual({ status: "ok" });
    expect((await at("/api/health/live", "HEAD")).status).toBe(200);
  });

  it("refuses another method with 405 and the methods it takes, and lists them for OPTIONS", async () => {
    const refused = await at("/api/webhooks/stripe", "GET");
    expect(refused.status).toBe(405);
    expect(refused.headers.get("allow")).toBe("POST, OPTIONS");
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    const options = await at("/api/health/live", "OPTIONS");
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("answers 404 for a path with no route, and for the bare prefixes", async () => {
    for (const path of ["/api/nothing", "/api/v1", "/api/trpc", "/checkout"]) {
      const res = await at(path);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});
