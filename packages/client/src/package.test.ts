import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const PACKAGE = "@idempotent-checkout/client";
const EXPORTS = ["createClient", "fileStore", "memoryStore", "pgStore"];
const listExports = `const m = await import(${JSON.stringify(PACKAGE)}); console.log(JSON.stringify(Object.keys(m).sort()));`;

/** The package as a caller that knows only its name gets it: from the workspace root. */
describe(`${PACKAGE}: the contract`, () => {
  it("loads compiled in plain Node (dist/, through package.json exports) with exactly its four functions", () => {
    expect(existsSync(new URL("../dist/index.d.ts", import.meta.url)), "dist/index.d.ts").toBe(true);
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", listExports], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual(EXPORTS);
  });

  it("has a browser-safe core and the server stores on sub-paths", () => {
    const script = `
      const core = await import("${PACKAGE}/core");
      const stores = await import("${PACKAGE}/stores");
      console.log(JSON.stringify([Object.keys(core).sort(), Object.keys(stores).sort()]));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual([
      [
        "DEFAULT_RETRY_POLICY",
        "latestUnanswered",
        "localStorageStore",
        "memoryStore",
        "parseRetryAfter",
        "retryDelay",
        "untilFinal",
        "verdictFor",
      ],
      ["fileStore", "memoryStore", "pgStore"],
    ]);
    // The core reaches no Node module, directly or through another file: a browser bundle takes it.
    for (const file of readdirSync(new URL("../dist/core", import.meta.url)).filter((f) => f.endsWith(".js")))
      expect(readFileSync(new URL(`../dist/core/${file}`, import.meta.url), "utf8"), file).not.toMatch(
        /from "(node:|\.\.\/)/,
      );
  });

  it("loads under tsx from the workspace", () => {
    const run = spawnSync(`${ROOT}/node_modules/.bin/tsx`, ["--input-type=module", "-e", listExports], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual(EXPORTS);
  });

  it("packs its compiled code, declarations, DDL and README", () => {
    const run = spawnSync("npm", ["pack", "--dry-run", "--json", "--workspace", PACKAGE], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    const files =
      (JSON.parse(run.stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "dist/core/index.js",
        "dist/stores/index.d.ts",
        "sql/intents.sql",
        "README.md",
        "package.json",
      ]),
    );
    expect(files.filter((f) => f.includes(".test."))).toEqual([]);
  });
});
