import { type BrowserContext, expect, type Page, test } from "@playwright/test";

// Production mode (APP_ENV=production) on a database development seeded first: real accounts
// only. The project "production" in playwright.config.ts runs this file against its own server.

const PASSWORD = "correct horse battery staple";
const SESSION_COOKIE = "__Secure-checkout.session_token";
const ADMIN_TOKEN = process.env.E2E_PRODUCTION_ADMIN_TOKEN ?? "";

function newEmail(what: string) {
  return `${what}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

/** Sign-up never signs in (it tells nobody which emails exist): the shopper signs in next. */
async function signUp(page: Page, email: string) {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await expect(page.getByRole("main").getByRole("status")).toHaveText(
    "Your account is ready: sign in with your email and password.",
  );
  await signIn(page, email, PASSWORD);
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

test("no demo credential works: no one-click, the demo keys, password and admin token are refused", async ({
  page,
  request,
}) => {
  await page.goto("/signin");
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Demo customers" })).toHaveCount(0);
  await expect(page.getByText("Alice Martin")).toHaveCount(0);
  for (const key of ["sk_test_alice", "sk_test_bob"]) {
    const me = await request.get("/api/trpc/account.me", { headers: { authorization: `Bearer ${key}` } });
    expect(me.status(), key).toBe(401);
  }
  const admin = await request.get("/api/trpc/admin.keys.counts", {
    headers: { authorization: "Bearer admin_test" },
  });
  expect(admin.status()).toBe(401);
  // The demo customer's account is still there (development made it), its demo password is not.
  await signIn(page, "alice@example.com", "demo-password-not-secret");
  await expect(page.getByRole("main").getByRole("alert")).toHaveText("Incorrect email or password");
  // The OpenAPI document names no demo key.
  expect(await (await request.get("/api/openapi.json")).text()).not.toMatch(/sk_test_|alice/);
});

test("sign-up answers an existing email as a new one", async ({ page }) => {
  const email = newEmail("taken");
  await signUp(page, email);
  await page.getByRole("button", { name: "Sign out" }).click();
  for (const address of [email, newEmail("free")]) {
    await page.goto("/signup");
    await page.getByLabel("Email").fill(address);
    await page.getByLabel("Password").fill("another long password");
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await expect(page).toHaveURL(/\/signin\?created=1$/);
    await expect(page.getByRole("main").getByRole("status")).toHaveText(
      "Your account is ready: sign in with your email and password.",
    );
  }
});

test("admin sign-in: a __Host- session cookie, ended by sign-out; the Bearer token works for the API", async ({
  page,
  context,
  request,
}) => {
  await page.goto("/admin/signin");
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/admin$/);
  const cookie = (await context.cookies()).find((c) => c.name === "__Host-checkout_admin");
  expect(cookie).toMatchObject({ secure: true, httpOnly: true, path: "/", sameSite: "Lax" });
  expect(cookie?.domain).toBe("127.0.0.1");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/admin\/signin$/);
  const copy = { cookie: `__Host-checkout_admin=${cookie?.value}` };
  expect((await request.get("/api/trpc/admin.keys.counts", { headers: copy })).status()).toBe(401);
  const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
  expect((await request.get("/api/trpc/admin.keys.counts", { headers: bearer })).status()).toBe(200);
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

test("past three wrong passwords each try waits longer, the right one included, and then it works", async ({
  page,
}) => {
  const email = newEmail("target");
  await signUp(page, email);
  await page.getByRole("button", { name: "Sign out" }).click();
  const messages: string[] = [];
  for (let i = 0; i < 5; i++) {
    await signIn(page, email, `wrong password ${i}`);
    const alert = page.getByRole("main").getByRole("alert");
    await expect(alert).toBeVisible();
    messages.push((await alert.textContent()) ?? "");
  }
  // Four failures checked; the fourth imposed a wait of 2 s, in which the fifth came.
  expect(messages.slice(0, 4)).toEqual(Array(4).fill("Incorrect email or password"));
  expect(messages[4]).toMatch(/^Too many attempts\. Try again in [12] seconds?\.$/);
  await page.waitForTimeout(2_100);
  await signIn(page, email, PASSWORD);
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
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
  // A key cannot manage keys: a leaked one mints none and revokes none.
  expect((await request.get("/api/trpc/account.apiKeys.list", { headers: bearer })).status()).toBe(403);

  await page.reload();
  await expect(page.getByText(secret)).toHaveCount(0);
  await expect(page.getByRole("list", { name: "API keys" })).toContainText(
    /orders and payments; created \d{4}-\d\d-\d\d; last used/,
  );
  await page.getByRole("button", { name: "Revoke order sync" }).click();
  // Revoke asks once more before the key stops working.
  expect((await request.get("/api/trpc/account.me", { headers: bearer })).status()).toBe(200);
  await page.getByRole("button", { name: "Revoke key" }).click();
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

// Last in this file: it leaves this server's address throttled for the admin token (15 minutes).
// Earlier tests here already spent some of the address's ten wrong tries (admin_test, say).
test("the admin sign-in form is throttled per address: after ten wrong tokens even the right one waits", async ({
  page,
  request,
}) => {
  const alert = page.locator("p[role=alert]");
  let throttledAfter = 0;
  for (let i = 1; i <= 11 && throttledAfter === 0; i++) {
    await page.goto("/admin/signin");
    await page.getByLabel("Admin token").fill(`wrong-token-${i}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(alert).toHaveText(/That is not the admin token\.|Too many wrong tokens/);
    if (/Too many/.test((await alert.textContent()) ?? "")) throttledAfter = i;
  }
  // Refused within the eleventh wrong try at the latest: the tenth wrong token spends the allowance.
  expect(throttledAfter).toBeGreaterThan(0);
  await page.goto("/admin/signin");
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(alert).toHaveText(/Too many wrong tokens from this address/);
  await expect(page).not.toHaveURL(/\/admin$/);
  // The same count guards the Bearer token: the address is refused there too.
  const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
  expect((await request.get("/api/trpc/admin.keys.counts", { headers: bearer })).status()).toBe(401);
});
