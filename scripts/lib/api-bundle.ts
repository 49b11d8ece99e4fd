import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The API tier's production entry, as the image runs it: `node dist/api.mjs`, from `npm run
 * build`, bundled here first when it is missing (as `npm start` builds Next when it has not been).
 * Its own CPU per payment is lower than the source's under tsx (docs/benchmarks.md).
 */
export function apiTierArgs(): string[] {
  const bundle = join(ROOT, "dist", "api.mjs");
  if (!existsSync(bundle))
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build-dist.ts"], {
      cwd: ROOT,
      stdio: "inherit",
    });
  return [bundle];
}
