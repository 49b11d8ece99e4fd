import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const PACKAGE = "@idempotent-checkout/idempotency";
const require = createRequire(import.meta.url);
const installedVersion = (name: string) => (require(`${name}/package.json`) as { version: string }).version;

/**
 * The package as a stranger gets it: `npm pack`, then `npm install <tarball>` into an empty
 * project (its dependencies and peers from the registry, through the npm cache), and a fixture
 * app written from the README alone (fixture/app.mjs) run against a fresh database.
 */
describe("the packed tarball in an empty project", () => {
  let dir: string;
  let database: TestDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "idempotency-fixture-"));
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", dir], {
        cwd: PACKAGE_DIR,
        encoding: "utf8",
      }),
    ) as { filename: string; files: { path: string }[] }[];
    const tarball = join(dir, packed[0]?.filename ?? "");
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "fixture", private: true, type: "module" }),
    );
    cpSync(join(PACKAGE_DIR, "fixture", "app.mjs"), join(dir, "app.mjs"));
    // The peers at the versions this workspace installed: their tarballs are in the npm cache.
    const peers = ["@trpc/server", "pg"].map((name) => `${name}@${installedVersion(name)}`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...peers], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    database = await freshDatabase({ migrate: false });
  }, 180_000);

  afterAll(async () => {
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ships only its compiled code, declarations, migration and README", () => {
    const run = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: PACKAGE_DIR,
      encoding: "utf8",
    });
    const files =
      (JSON.parse(run.stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "sql/migration.sql",
        "README.md",
        "package.json",
      ]),
    );
    expect(
      files.filter((f) => f.includes(".test.") || f.startsWith("src/") || f.includes("testing")),
    ).toEqual([]);
  });

  it("names at most 15 things at its front door, types included", () => {
    const declarations = readFileSync(join(PACKAGE_DIR, "dist", "index.d.ts"), "utf8");
    const names = [...declarations.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((m) =>
      (m[1] ?? "")
        .split(",")
        .map((n) => n.replace(/^\s*type\s+/, "").trim())
        .filter(Boolean),
    );
    expect(names.length).toBeLessThanOrEqual(15);
    expect(names).toContain("createIdempotency");
  });

  it("loads in plain Node, and refuses a deep import of its files", () => {
    const load = (specifier: string) =>
      spawnSync(
        process.execPath,
        ["-e", `import(${JSON.stringify(specifier)}).then((m) => console.log(Object.keys(m).length))`],
        {
          cwd: dir,
          encoding: "utf8",
        },
      );
    const entry = load(PACKAGE);
    expect(entry.stderr).toBe("");
    // The front door's runtime names (its types are erased); the bound is 15 with types.
    expect(Number(entry.stdout.trim())).toBe(7);
    for (const sub of ["sql", "admin", "bench"]) {
      const loaded = load(`${PACKAGE}/${sub}`);
      expect(loaded.stderr, sub).toBe("");
      expect(Number(loaded.stdout.trim()), sub).toBeGreaterThan(0);
    }
    for (const deep of [`${PACKAGE}/dist/store.js`, `${PACKAGE}/src/store`, `${PACKAGE}/dist/index.js`]) {
      expect(load(deep).stderr, deep).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    }
  });

  it("runs the README's app: claim, replay, 422, 409 in flight, a fenced takeover and a resumed atomic phase", () => {
    const run = spawnSync(process.execPath, ["app.mjs"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, DATABASE_URL: database.url },
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const seen = JSON.parse(run.stdout);

    expect(seen.claim).toEqual({ data: { orderRef: "o1", amount: 500 }, replayed: null, retryAfter: null });
    expect(seen.replay).toEqual({
      data: { orderRef: "o1", amount: 500 },
      replayed: "true",
      retryAfter: null,
    });
    expect(seen.otherRequest).toMatchObject({ error: "UNPROCESSABLE_CONTENT" });
    expect(seen.chargesO1).toBe(1);

    expect(seen.inFlight).toMatchObject({ error: "CONFLICT", retryAfter: "1" });
    expect(seen.takeover).toEqual({
      data: { orderRef: "o2", amount: 900 },
      replayed: null,
      retryAfter: null,
    });
    // The first attempt finished after it had lost the key: its write rolled back, and it was told 409.
    expect(seen.staleOwner).toMatchObject({ error: "CONFLICT", retryAfter: "1" });
    expect(seen.chargesO2).toEqual([{ fence: 2 }]);
    expect(seen.keyO2).toEqual({ state: "completed", fence: 2, recovery_point: "started" });

    expect(seen.crashed).toMatchObject({ error: "INTERNAL_SERVER_ERROR" });
    expect(seen.keyO3AfterCrash).toEqual({ state: "in_progress", fence: 1, recovery_point: "reserved" });
    expect(seen.resumed).toMatchObject({ data: { reserved: "o3", resumedFrom: "reserved" } });
    expect(seen.reservationsO3).toBe(1);
  });
});
