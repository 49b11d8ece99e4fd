import { type BrowserContext, expect, type Page, test } from "@playwright/test";

// Production mode (APP_ENV=production) on an empty database: real accounts only.
// The project "production" in playwright.config.ts runs this file against its own server.

const PASSWORD = "correct horse battery staple";
const SESSION_COOKIE = "__Secure-checkout.session_token";

function newEmail(what: string) {
  return `${what}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

async function signUp(page: Page, email: string) {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function sessionCookie(context: BrowserContext) {
  return (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
}

test("no demo customers: the sign-in page lists none and their API keys do not work", async ({
  page,
  request,
}) => {
  await page.goto("/signin");
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Demo customers" })).toHaveCount(0);
  await expect(page.getByText("Alice Martin")).toHaveCount(0);
  const me = await request.get("/api/trpc/account.me", {
    headers: { authorization: "Bearer sk_test_alice" },
  });
  expect(me.status()).toBe(401);
});

test("sign up, sign out, a wrong password refused, the right one accepted", async ({ page, context }) => {
  const email = newEmail("shopper");
  await signUp(page, email);
  // The header names who is signed in.
  await expect(page.getByRole("banner").getByText(email)).toBeVisible();

  const cookie = await sessionCookie(context);
  expect(cookie, "the session cookie").toBeDefined();
  expect(cookie?.secure).toBe(true);
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe("Lax");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);
  await expect(page.getByRole("banner").getByRole("link", { name: "Sign in" })).toBeVisible();
  // The session ended on the server: a copy of the old cookie is worthless.
  const replay = await page.request.get("/api/trpc/account.me", {
    headers: { cookie: `${SESSION_COOKIE}=${cookie?.value}` },
  });
  expect(replay.status()).toBe(401);

  await signIn(page, email, "not the password at all");
  await expect(page.getByRole("main").getByRole("alert")).toHaveText("Incorrect email or password");
  expect(await sessionCookie(context)).toBeUndefined();

  await signIn(page, email, PASSWORD);
  await expect(page.getByRole("banner").getByText(email)).toBeVisible();
  const me = await page.request.get("/api/trpc/account.me");
  expect((await me.json()).result.data.name).toBe(email);
});

test("15 wrong passwords in a row are throttled, and then even the right one waits", async ({ page }) => {
  const email = newEmail("target");
  await signUp(page, email);
  await page.getByRole("button", { name: "Sign out" }).click();
  const messages: string[] = [];
  for (let i = 0; i < 15; i++) {
    await signIn(page, email, `wrong password ${i}`);
    const alert = page.getByRole("main").getByRole("alert");
    await expect(alert).toBeVisible();
    messages.push((await alert.textContent()) ?? "");
  }
  expect(messages.slice(0, 10)).toEqual(Array(10).fill("Incorrect email or password"));
  for (const message of messages.slice(10))
    expect(message).toMatch(/^Too many attempts\. Try again in \d+ minutes?\.$/);
  await signIn(page, email, PASSWORD);
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/^Too many attempts/);
});

test("a cookie-authenticated mutation from a foreign Origin is refused", async ({ page }) => {
  await signUp(page, newEmail("csrf"));
  const create = (origin: string) =>
    page.request.post("/api/trpc/account.apiKeys.create", {
      headers: { origin, "content-type": "application/json" },
      data: { label: "from elsewhere" },
    });
  const foreign = await create("https://evil.example");
  expect(foreign.status()).toBe(403);
  expect(
    (await page.request.get("/api/trpc/account.apiKeys.list").then((r) => r.json())).result.data,
  ).toEqual([]);
  const own = await create(new URL(page.url()).origin);
  expect(own.status()).toBe(200);
});

test("an account's API keys: created on the account page, shown once, working, then revoked", async ({
  page,
  request,
}) => {
  await signUp(page, newEmail("keys"));
  await page
    .getByRole("banner")
    .getByRole("link", { name: /^Account of / })
    .click();
  await page.getByLabel("Key name").fill("order sync");
  await page.getByRole("button", { name: "Create API key" }).click();
  const secret = (await page.getByLabel("New API key").textContent()) ?? "";
  expect(secret).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
  const bearer = { authorization: `Bearer ${secret}` };
  expect((await request.get("/api/trpc/account.me", { headers: bearer })).status()).toBe(200);

  await page.reload();
  await expect(page.getByText(secret)).toHaveCount(0);
  await page.getByRole("button", { name: "Revoke order sync" }).click();
  await expect(page.getByText("No API keys yet.")).toBeVisible();
  expect((await request.get("/api/trpc/account.me", { headers: bearer })).status()).toBe(401);
});

test("pages carry a nonce CSP that forbids framing, a referrer policy and HSTS", async ({ page }) => {
  const response = await page.goto("/signin");
  const headers = response?.headers() ?? {};
  const csp = headers["content-security-policy"] ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).not.toContain("unsafe-eval");
  expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(headers["strict-transport-security"]).toMatch(/^max-age=\d{8}/);
  // The page's own scripts run under that policy: the form works (hydrated) and nothing was blocked.
  const blocked: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
  });
  await page.reload();
  await page.getByLabel("Email").fill("nobody@example.com");
  await page.getByLabel("Password").fill("whatever it is");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText("Incorrect email or password");
  expect(blocked).toEqual([]);
});
