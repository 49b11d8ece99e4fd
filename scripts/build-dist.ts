/**
 * After `next build` (`npm run build`'s postbuild): what a deployment runs without tsx or the
 * whole node_modules (docs/decisions/0152).
 * - Next's standalone server gets the static files it does not copy itself (`.next/static`,
 *   `public/`), so `node .next/standalone/server.js` serves the whole site.
 * - The API tier, the provider, the worker and the migration step are bundled by esbuild, dependencies
 *   included, into `dist/*.mjs`: plain `node dist/worker.mjs`.
 */
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST_DIR = process.env.NEXT_DIST_DIR ?? ".next";

export const ENTRY_POINTS = {
  api: "scripts/api.ts",
  provider: "provider/main.ts",
  worker: "scripts/worker.ts",
  migrate: "scripts/migrate.ts",
} as const;

const standalone = join(ROOT, DIST_DIR, "standalone");
if (existsSync(standalone)) {
  cpSync(join(ROOT, DIST_DIR, "static"), join(standalone, DIST_DIR, "static"), { recursive: true });
  if (existsSync(join(ROOT, "public")))
    cpSync(join(ROOT, "public"), join(standalone, "public"), { recursive: true });
}

await build({
  absWorkingDir: ROOT,
  entryPoints: Object.entries(ENTRY_POINTS).map(([out, input]) => ({ out, in: input })),
  outdir: join(ROOT, "dist"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  sourcemap: "linked",
  logLevel: "warning",
  // Some dependencies are CommonJS that use require() and __dirname: give the ES module both.
  banner: {
    js: [
      "import { createRequire as __createRequire } from 'node:module';",
      "import { fileURLToPath as __fileURLToPath } from 'node:url';",
      "const require = __createRequire(import.meta.url);",
      "const __filename = __fileURLToPath(import.meta.url);",
      "const __dirname = __fileURLToPath(new URL('.', import.meta.url));",
    ].join(" "),
  },
});
console.log(
  `dist: ${Object.keys(ENTRY_POINTS)
    .map((name) => `dist/${name}.mjs`)
    .join(", ")}`,
);
