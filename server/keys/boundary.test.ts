import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `npm run lint`'s dependency rules against a file that reaches into the package three ways: by
 * its name and a file its `exports` do not offer (source, and compiled), and by a relative path.
 */
describe("the idempotency package's boundary", () => {
  it("fails every deliberate import of a package internal", () => {
    const file = `server/keys/deep-import-${randomBytes(4).toString("hex")}.ts`;
    writeFileSync(
      `${ROOT}/${file}`,
      [
        'import { claimKey } from "@idempotent-checkout/idempotency/src/store";',
        'import { completeKey } from "@idempotent-checkout/idempotency/dist/store.js";',
        'import { releaseKey } from "../../packages/idempotency/src/store";',
        "export const reached = [claimKey, completeKey, releaseKey];",
        "",
      ].join("\n"),
    );
    try {
      const run = spawnSync(
        `${ROOT}/node_modules/.bin/depcruise`,
        [file, "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
        { cwd: ROOT, encoding: "utf8" },
      );
      const { summary } = JSON.parse(run.stdout) as {
        summary: { violations: { rule: { name: string }; to: string }[] };
      };
      expect(summary.violations.map((v) => [v.rule.name, v.to]).sort()).toEqual([
        ["idempotency-package-through-its-entry", "packages/idempotency/src/store.ts"],
        ["no-unresolvable", "@idempotent-checkout/idempotency/dist/store.js"],
        ["no-unresolvable", "@idempotent-checkout/idempotency/src/store"],
      ]);
    } finally {
      rmSync(`${ROOT}/${file}`, { force: true });
    }
  });
});
