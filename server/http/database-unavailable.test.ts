import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { directTestDatabaseUrl } from "../test/fixtures";
import { postPayment, startApiProcess } from "../test/processes";
import { call, restOrder } from "../test/rest-stack";
import { type StallingProxy, startStallingProxy } from "../test/stalling-proxy";
import { it } from "../test/vitest";

// A lost database (its primary killed, a failover under way) is an outage to wait out, not an
// internal error: the client is told to retry the same key, and the retry pays once.
let proxy: StallingProxy;
let api: Awaited<ReturnType<typeof startApiProcess>>;
beforeAll(async () => {
  proxy = await startStallingProxy(directTestDatabaseUrl());
});
afterAll(async () => {
  await api?.stop();
  await proxy.close();
});

describe("the database is lost while shoppers pay", () => {
  it("answers 503 with Retry-After on both surfaces, and the same key pays once it is back", async ({
    provider,
    account,
  }) => {
    api = await startApiProcess({
      DATABASE_URL: proxy.url,
      DIRECT_DATABASE_URL: proxy.url,
      DATABASE_PREPARED_STATEMENTS: "off",
      PAYMENT_PROVIDER_URL: provider.url,
      BACKGROUND_JOBS: "off",
    });
    const order = await restOrder(api.url, account.token);
    const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const key = randomUUID();
    proxy.cut();

    const rest = await call(api.url, "POST", "/api/v1/payments", { token: account.token, key, body });
    expect(rest.status).toBe(503);
    expect(rest.headers.get("retry-after")).toBe("1");
    expect(rest.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(rest.text)).toMatchObject({ type: "/docs/problems#database-unavailable", status: 503 });

    const trpc = await postPayment(api.url, account.token, key, body);
    expect(trpc.status).toBe(503);
    expect(trpc.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(trpc.text)).toMatchObject({
      error: { data: { code: "SERVICE_UNAVAILABLE", httpStatus: 503 } },
    });

    proxy.resume();
    let paid = rest;
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      paid = await call(api.url, "POST", "/api/v1/payments", { token: account.token, key, body });
      if (paid.status === 200) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(paid.status).toBe(200);
    const again = await call(api.url, "POST", "/api/v1/payments", { token: account.token, key, body });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.parse(again.text)).toEqual(JSON.parse(paid.text));
  });
});
