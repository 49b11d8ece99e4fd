/**
 * `npm run lint:openapi`: the OpenAPI document as production serves it, checked by Redocly's
 * recommended rules (redocly.yaml); any error or warning fails.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openApiDocument } from "../server/http/openapi";

const dir = mkdtempSync(path.join(tmpdir(), "openapi-"));
const file = path.join(dir, "openapi.json");
let status = 0;
try {
  for (const production of [false, true]) {
    writeFileSync(file, JSON.stringify(openApiDocument(production)));
    // Redocly exits 0 on warnings: the summary's counts decide.
    const run = spawnSync("redocly", ["lint", "--format", "json", file], { encoding: "utf8" });
    const totals = JSON.parse(run.stdout || "{}").totals as { errors: number; warnings: number } | undefined;
    const clean = run.status === 0 && totals?.errors === 0 && totals.warnings === 0;
    if (!clean) {
      spawnSync("redocly", ["lint", "--format", "stylish", file], { stdio: "inherit" });
      console.error(`OpenAPI document (${production ? "production" : "development"}): not clean`);
      status = 1;
      break;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
