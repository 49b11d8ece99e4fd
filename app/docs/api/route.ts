import { EXPLORER_PATH, renderReferencePage } from "@/server/http/api-reference/page";
import { OPENAPI_PATH, openApiDocument } from "@/server/http/openapi";
import { scriptlessCsp } from "@/server/http/security-headers";

/** The API reference, rendered here from the OpenAPI document (decision 0230): no script at all. */
export function GET(): Response {
  const html = renderReferencePage(openApiDocument(), EXPLORER_PATH, OPENAPI_PATH);
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "public, max-age=300",
      "Content-Security-Policy": scriptlessCsp(),
    },
  });
}
