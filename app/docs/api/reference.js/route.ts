import { readFile } from "node:fs/promises";
import path from "node:path";

// Rendered at build time from the installed package (the version package.json pins).
export const dynamic = "force-static";

/** The standalone bundle of @scalar/api-reference, served by this app instead of a CDN. */
export async function GET() {
  const file = path.join(process.cwd(), "node_modules/@scalar/api-reference/dist/browser/standalone.js");
  return new Response(await readFile(file), {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" },
  });
}
