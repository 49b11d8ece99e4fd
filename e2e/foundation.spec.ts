import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";

test("health: liveness, readiness (the database answered), and the older /api/health", async ({
  request,
}) => {
  const live = await request.get("/api/health/live");
  expect([live.status(), await live.json()]).toEqual([200, { status: "ok" }]);
  for (const path of ["/api/health/ready", "/api/health"]) {
    const res = await request.get(path);
    expect([res.status(), await res.json()], path).toEqual([200, { status: "ok", database: "up" }]);
  }
});

test("a shopper signs in as a demo customer and sees the catalogue", async ({ page }) => {
  await page.goto("/signin");
  await page.getByRole("button", { name: "Alice Martin" }).click();
  await expect(page.getByText("Signed in as Alice Martin.")).toBeVisible();
  await expect(page.getByRole("list", { name: "Products" }).getByRole("listitem")).toHaveCount(6);
});

test("protected procedures answer 401 without a valid token", async ({ request }) => {
  expect((await request.get("/api/trpc/account.me")).status()).toBe(401);
  const bad = await request.get("/api/trpc/account.me", {
    headers: { authorization: "Bearer sk_test_nobody" },
  });
  expect(bad.status()).toBe(401);
  const good = await request.get("/api/trpc/account.me", {
    headers: { authorization: "Bearer sk_test_bob" },
  });
  expect(good.status()).toBe(200);
  expect((await good.json()).result.data.handle).toBe("bob");
});

test('docs/api.md\'s "Try the API" commands, run as written: catalogue, an order, a payment and its replay', async ({
  baseURL,
}) => {
  const readme = readFileSync("docs/api.md", "utf8");
  const section = readme.slice(readme.indexOf("## Try the API"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block, "docs/api.md has a sh block under Try the API").toBeTruthy();
  // Only the server's address differs from what a reader types.
  const script = (block ?? "").replace("BASE=http://localhost:3000", `BASE=${baseURL}`);
  expect(script).not.toBe(block);
  const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], { encoding: "utf8", timeout: 30_000 });
  expect(run.status, run.stderr).toBe(0);

  expect(run.stdout).toContain('"sku":"TEE-CLASSIC"');
  // The two `curl -si` answers: status line, headers, blank line, body.
  const answers = run.stdout.split(/(?=HTTP\/1\.1 \d{3} )/).filter((part) => part.startsWith("HTTP/"));
  expect(answers).toHaveLength(2);
  const [first, again] = answers.map((raw) => {
    const [head = "", body = ""] = raw.split(/\r\n\r\n/);
    return { head: head.toLowerCase(), body };
  });
  expect(first?.head).toMatch(/^http\/1\.1 200/);
  expect(first?.head).not.toContain("idempotent-replayed");
  expect(JSON.parse(first?.body ?? "")).toMatchObject({ amount: 2500, currency: "EUR", status: "succeeded" });
  expect(again?.head).toMatch(/^http\/1\.1 200/);
  expect(again?.head).toContain("idempotent-replayed: true");
  expect(again?.body).toBe(first?.body);
});
