import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient } from "../db";
import { applyMigrations } from "../db/migrate";
import { disableDemoCredentials, seedDemoData } from "../seed";
import { createScratchDatabase, createTestAccount } from "../test/fixtures";
import { startApiProcess } from "../test/processes";
import { DEMO_CUSTOMERS } from "./demo";

// The API as production runs it (APP_ENV=production, real secrets) against the test database,
// which development's seed filled: no demo credential and no development secret opens anything.

const ADMIN_TOKEN = randomBytes(32).toString("base64url");
let api: Awaited<ReturnType<typeof startApiProcess>>;

beforeAll(async () => {
  api = await startApiProcess({
    APP_ENV: "production",
    ADMIN_TOKEN,
    SESSION_SECRET: randomBytes(32).toString("base64url"),
    BACKGROUND_JOBS: "off",
  });
});
afterAll(async () => {
  await api?.stop();
});

const get = (path: string, token: string) =>
  fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe("production", () => {
  it("refuses the demo keys, any sk_test_ key and the development admin token (401)", async () => {
    for (const c of DEMO_CUSTOMERS) expect(await get("/api/trpc/account.me", c.token), c.token).toBe(401);
    const tester = await createTestAccount("prod");
    expect(await get("/api/trpc/account.me", tester.token)).toBe(401);
    expect(await get("/api/trpc/admin.keys.counts", "admin_test")).toBe(401);
    expect(await get("/api/trpc/admin.keys.counts", ADMIN_TOKEN)).toBe(200);
  });

  it("serves an OpenAPI document that names no demo key", async () => {
    const doc = await (await fetch(`${api.url}/api/openapi.json`)).text();
    expect(doc).not.toMatch(/sk_test_|alice/);
  });
});

describe("a production start on a database development seeded", () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createScratchDatabase("issue26_demo"));
    await applyMigrations(url);
  });
  afterAll(() => drop());

  it("deletes the demo keys and the demo password, keeps the accounts, and says what it removed", async () => {
    const prisma = createPrismaClient(url);
    try {
      expect(await seedDemoData(prisma, { production: false })).toBe(true);
      expect(await disableDemoCredentials(prisma)).toEqual({
        apiKeys: DEMO_CUSTOMERS.map((c) => c.token),
        passwords: DEMO_CUSTOMERS.map((c) => c.email),
      });
      expect(await prisma.apiToken.count()).toBe(0);
      expect(await prisma.credential.count()).toBe(0);
      // The demo customers are kept; the operators' account (a migration's, on .invalid) is no shopper.
      expect(await prisma.account.count({ where: { NOT: { email: { endsWith: ".invalid" } } } })).toBe(
        DEMO_CUSTOMERS.length,
      );
      // Nothing is left the second time.
      expect(await disableDemoCredentials(prisma)).toEqual({ apiKeys: [], passwords: [] });
    } finally {
      await prisma.$disconnect();
    }
  });
});
