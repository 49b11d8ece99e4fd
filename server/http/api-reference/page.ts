import type { OpenAPIObject } from "trpc-to-openapi";
import type { CodeSample } from "./code-samples";

/**
 * The API reference as one server-rendered HTML document, read from the OpenAPI document: no
 * script at all, so it weighs a few tens of kilobytes where the Scalar viewer's bundle weighs 1.4
 * MB compressed (decision 0230). Scalar stays at /docs/api/explorer for reading it interactively.
 */

/** Where Scalar's interactive reader of the same document is served. */
export const EXPLORER_PATH = "/docs/api/explorer";

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Response {
  description?: string;
  headers?: Record<string, { description?: string }>;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, Response>;
  "x-codeSamples"?: CodeSample[];
}

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function inline(text: string): string {
  return esc(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
}

/** The Markdown the document's descriptions use: paragraphs, lists and tables. */
export function markdown(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split("\n");
      if (lines.every((l) => l.startsWith("|"))) {
        const cells = (l: string) =>
          l
            .slice(1, -1)
            .split("|")
            .map((c) => c.trim());
        const [head = "", , ...rows] = lines;
        return `<div class="scroll" tabindex="0"><table><thead><tr>${cells(head)
          .map((c) => `<th scope="col">${inline(c)}</th>`)
          .join("")}</tr></thead><tbody>${rows
          .map(
            (r) =>
              `<tr>${cells(r)
                .map((c) => `<td>${inline(c)}</td>`)
                .join("")}</tr>`,
          )
          .join("")}</tbody></table></div>`;
      }
      if (lines.every((l) => l.startsWith("- ")))
        return `<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join("")}</ul>`;
      return `<p>${inline(block)}</p>`;
    })
    .join("\n");
}

const refName = (ref: string) => ref.split("/").at(-1) ?? ref;

/** A schema's type in a few words: a link for a named schema, `a or b` for a union. */
function typeOf(s: Schema): string {
  if (s.$ref) return `<a href="#schema-${esc(refName(s.$ref))}">${esc(refName(s.$ref))}</a>`;
  const union = s.anyOf ?? s.oneOf;
  if (union) return union.map(typeOf).join(" or ");
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (s.type === "array" && s.items) return `array of ${typeOf(s.items)}`;
  const type = Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "any");
  return esc(s.format ? `${type} (${s.format})` : type);
}

/** An object's fields, nested objects within (the document nests at most a few levels). */
function fields(s: Schema, depth = 0): string {
  const objectOf = (x: Schema): Schema | undefined =>
    x.properties ? x : x.items?.properties ? x.items : (x.anyOf ?? x.oneOf)?.find((u) => u.properties);
  const target = objectOf(s);
  if (!target?.properties || depth > 3) return "";
  const required = new Set(target.required ?? []);
  return `<ul class="fields">${Object.entries(target.properties)
    .map(([name, p]) => {
      const values = p.enum?.length
        ? ` One of ${p.enum.map((v) => `<code>${esc(String(v))}</code>`).join(", ")}.`
        : "";
      return `<li><code>${esc(name)}</code> <span class="type">${typeOf(p)}</span>${
        required.has(name) ? ' <span class="req">required</span>' : ""
      }${p.description ? ` — ${inline(p.description)}` : ""}${values}${fields(p, depth + 1)}</li>`;
    })
    .join("")}</ul>`;
}

function bodySchema(content: Record<string, { schema?: Schema }> | undefined): string {
  const [type, media] = Object.entries(content ?? {})[0] ?? [];
  if (!type || !media?.schema) return "";
  const s = media.schema;
  return `<p><code>${esc(type)}</code>: ${typeOf(s)}</p>${s.$ref ? "" : fields(s)}`;
}

function operation(method: string, path: string, op: Operation): string {
  const id = `op-${esc(op.operationId)}`;
  const auth = op.security?.length
    ? op.security.some((s) => "AdminToken" in s)
      ? "Operators: <code>Authorization: Bearer &lt;ADMIN_TOKEN&gt;</code>."
      : "<code>Authorization: Bearer &lt;API key&gt;</code>."
    : "Public: no authentication.";
  const params = op.parameters?.length
    ? `<h4>Parameters</h4><ul class="fields">${op.parameters
        .map(
          (p) =>
            `<li><code>${esc(p.name)}</code> <span class="type">${esc(p.in)}, ${p.schema ? typeOf(p.schema) : "string"}</span>${
              p.required ? ' <span class="req">required</span>' : ""
            }${p.description ? ` — ${inline(p.description)}` : ""}</li>`,
        )
        .join("")}</ul>`
    : "";
  const body = op.requestBody ? `<h4>Request body</h4>${bodySchema(op.requestBody.content)}` : "";
  const responses = Object.entries(op.responses ?? {})
    .map(
      ([status, r]) =>
        `<li><strong>${esc(status)}</strong> ${inline(r.description ?? "")}${
          r.headers
            ? ` Headers: ${Object.keys(r.headers)
                .map((h) => `<code>${esc(h)}</code>`)
                .join(", ")}.`
            : ""
        }${bodySchema(r.content)}</li>`,
    )
    .join("");
  const samples = (op["x-codeSamples"] ?? [])
    .map(
      (s) =>
        `<figure class="sample"><figcaption>${esc(s.label)}</figcaption><pre tabindex="0"><code>${esc(s.source)}</code></pre></figure>`,
    )
    .join("");
  return `<section class="operation" aria-labelledby="${id}">
<h3 id="${id}">${esc(op.summary ?? op.operationId)}</h3>
<p class="route"><span class="method">${esc(method.toUpperCase())}</span> <code>/api/v1${esc(path)}</code></p>
<p>${auth}</p>
${markdown(op.description ?? "")}
${params}${body}<h4>Responses</h4><ul class="responses">${responses}</ul>
<h4>Code samples</h4>${samples}
</section>`;
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#fff}
a{color:#1f5fbf}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
code{overflow-wrap:anywhere}
.layout{display:grid;grid-template-columns:minmax(0,16rem) minmax(0,1fr);max-width:80rem;margin:0 auto}
nav{padding:1rem;border-right:1px solid #e4e4de;position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto}
nav ul{list-style:none;margin:0;padding:0}
nav ul ul{padding-left:.75rem;margin-bottom:.5rem;font-size:.9rem}
main{padding:1rem 1.5rem;min-width:0}
.operation{border-top:1px solid #e4e4de;padding-top:.5rem;margin-top:1.5rem}
.method{font-weight:700;color:#116329}
.type{color:#5b6470}
.req{color:#b42318;font-size:.85em}
.fields,.responses{padding-left:1.25rem}
.sample{margin:0 0 1rem}
.sample figcaption{font-size:.85rem;color:#5b6470}
pre{background:#f4f4f0;padding:.75rem;overflow-x:auto;border-radius:6px;margin:.25rem 0}
pre code{overflow-wrap:normal}
.scroll{overflow-x:auto}
table{border-collapse:collapse}
th,td{border:1px solid #e4e4de;padding:.25rem .5rem;text-align:left;vertical-align:top}
@media (max-width:760px){.layout{grid-template-columns:minmax(0,1fr)}nav{position:static;max-height:none;border-right:0;border-bottom:1px solid #e4e4de}}
`;

/** The whole page: the operations by tag (with a table of contents), then the named schemas. */
export function renderReferencePage(doc: OpenAPIObject, explorerPath: string, documentPath: string): string {
  const byTag = new Map<string, string[]>();
  const toc = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, raw] of Object.entries(item as Record<string, Operation>)) {
      const tag = raw.tags?.[0] ?? "other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), operation(method, path, raw)]);
      toc.set(tag, [
        ...(toc.get(tag) ?? []),
        `<li><a href="#op-${esc(raw.operationId)}">${esc(raw.summary ?? raw.operationId)}</a></li>`,
      ]);
    }
  }
  const schemas = Object.entries((doc.components?.schemas ?? {}) as Record<string, Schema>)
    .map(
      ([name, s]) =>
        `<section aria-labelledby="schema-${esc(name)}"><h3 id="schema-${esc(name)}">${esc(name)}</h3>${
          s.description ? markdown(s.description) : ""
        }${fields(s)}</section>`,
    )
    .join("");
  const title = esc(doc.info.title);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · reference</title><style>${STYLE}</style></head>
<body><div class="layout">
<nav aria-label="Operations"><p><strong>${title}</strong></p><ul>${[...toc]
    .map(([tag, items]) => `<li><a href="#tag-${esc(tag)}">${esc(tag)}</a><ul>${items.join("")}</ul></li>`)
    .join("")}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main id="main">
<h1>${title}</h1>
<p>Version ${esc(doc.info.version)}. The OpenAPI document: <a href="${esc(documentPath)}">${esc(documentPath)}</a>. An interactive reader of the same document: <a href="${esc(explorerPath)}">the explorer</a> (it loads about 1.4 MB of JavaScript).</p>
${markdown(doc.info.description ?? "")}
${[...byTag]
  .map(
    ([tag, ops]) =>
      `<section aria-labelledby="tag-${esc(tag)}"><h2 id="tag-${esc(tag)}">${esc(tag)}</h2>${ops.join("\n")}</section>`,
  )
  .join("\n")}
<section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>${schemas}</section>
</main></div></body></html>`;
}
