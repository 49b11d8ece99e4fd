import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { env } from "../env";
import { IDEMPOTENCY_DEFAULTS } from "../keys";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { type CodeSample, codeSamples } from "./api-reference/code-samples";
import { PROBLEM_CONTENT_TYPE, PROBLEM_DOCS_PATH, PROBLEM_TYPES, problemTypeUri, ZProblem } from "./problems";
import { REST_PREFIX, WWW_AUTHENTICATE } from "./rest-handler";

export const OPENAPI_PATH = "/api/openapi.json";

const problemList = Object.entries(PROBLEM_TYPES)
  .map(
    ([slug, p]) => `| ${p.status} | \`${problemTypeUri(slug as keyof typeof PROBLEM_TYPES)}\` | ${p.title} |`,
  )
  .join("\n");

/** Development names the demo customers' keys; production names none (they are refused there). */
function authentication(production: boolean): string {
  const keys = production
    ? "API keys start with `sk_live_` and are created at `/account`"
    : "demo keys: `sk_test_alice`, `sk_test_bob`";
  return `Authenticate with \`Authorization: Bearer <API key>\` (${keys}). A key's scope is \`payments\` (orders and payments) or \`read_only\` (GET only: anything else is 403). Amounts are integer minor units of their currency.`;
}

const description = (
  production: boolean,
) => `The checkout's REST API: the same procedures and the same idempotency layer as the tRPC API at \`/api/trpc\`.

${authentication(production)}

**Idempotency.** \`POST /payments\` requires an \`Idempotency-Key\` header (IETF draft-ietf-httpapi-idempotency-key-header). Keys are scoped to the account and kept for **${IDEMPOTENCY_DEFAULTS.ttlSeconds / 3600} hours** after the request completes; a replay answers the first response's status and body with \`Idempotent-Replayed: true\`.

**Errors** are RFC 9457 problem details (\`${PROBLEM_CONTENT_TYPE}\`), documented at \`${PROBLEM_DOCS_PATH}\`:

| status | type | title |
| --- | --- | --- |
${problemList}`;

type Operation = {
  operationId?: string;
  parameters?: { in?: string; name?: string }[];
  requestBody?: unknown;
  "x-codeSamples"?: CodeSample[];
  security?: Record<string, string[]>[];
  responses?: Record<string, { description?: string; headers?: Record<string, unknown>; content?: unknown }>;
};

const retryAfter = {
  description: "Seconds to wait before retrying with the same Idempotency-Key.",
  schema: { type: "integer", minimum: 1 },
};
const replayed = {
  description: "Present on a replay of the stored first response.",
  schema: { type: "string", enum: ["true"] },
};

const wwwAuthenticate = {
  description: "The authentication scheme the API takes.",
  schema: { type: "string", example: WWW_AUTHENTICATE },
};

/**
 * In flight: Retry-After. Stored outcomes (402, 404, 409 already paid): the replay marker. The
 * provider unavailable (503): Retry-After.
 */
function idempotencyHeaders(status: string): Record<string, unknown> | undefined {
  if (status === "409") return { "Retry-After": retryAfter, "Idempotent-Replayed": replayed };
  if (status === "503") return { "Retry-After": retryAfter };
  if (status === "402" || status === "404") return { "Idempotent-Replayed": replayed };
  return undefined;
}

/** Headers every operation's answer with this status carries, idempotent or not. */
function statusHeaders(status: string): Record<string, unknown> | undefined {
  if (status === "401") return { "WWW-Authenticate": wwwAuthenticate };
  if (status === "429")
    return { "Retry-After": { ...retryAfter, description: "Seconds until the allowance refills." } };
  return undefined;
}

/**
 * Generated from the router's `meta.openapi`; then every error response is declared as a
 * problem (the generator only knows its own JSON error shape), and the idempotent operations
 * get their protocol headers on the answers that carry them; each operation carries its code
 * samples (the SDK's call where it has one, and curl).
 */
function buildDocument(production: boolean): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: "Idempotent Checkout API",
    version: "1",
    baseUrl: REST_PREFIX,
    description: description(production),
    securitySchemes: {
      ApiKey: {
        type: "http",
        scheme: "bearer",
        description: production
          ? "A customer API key (`sk_live_…`)."
          : "A customer API key, e.g. `sk_test_alice`.",
      },
      AdminToken: {
        type: "http",
        scheme: "bearer",
        description: "The operators' `ADMIN_TOKEN`; customer API keys are refused.",
      },
    },
    defs: { Problem: ZProblem },
  });
  const metas = new Map<string, Meta>();
  for (const { _def } of Object.values(
    appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>,
  )) {
    if (_def.meta?.openapi)
      metas.set(`${_def.meta.openapi.method.toLowerCase()} ${_def.meta.openapi.path}`, _def.meta);
  }
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const meta = metas.get(`${method} ${path}`);
      // Public operations say so; the operators' ones name their own scheme.
      // (The generator lists every scheme on every protected operation.)
      op.security = !op.security ? [] : meta?.admin ? [{ AdminToken: [] }] : [{ ApiKey: [] }];
      const described = meta?.openapi?.errorResponses as Record<number, string> | undefined;
      const responses: NonNullable<Operation["responses"]> = {};
      for (const [status, generated] of Object.entries({ ...op.responses, 500: {} })) {
        if (Number(status) < 400) {
          responses[status] = generated;
          continue;
        }
        // A fresh object each: the generator shares one error response object per tRPC code.
        const headers = { ...statusHeaders(status), ...(meta?.idempotent ? idempotencyHeaders(status) : {}) };
        responses[status] = {
          description: described?.[Number(status)] ?? "Unexpected error; details are in the server log.",
          content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } },
          ...(Object.keys(headers).length ? { headers } : {}),
        };
      }
      op.responses = responses;
      op["x-codeSamples"] = codeSamples(method, path, op);
    }
  }
  doc.info.license = { name: "MIT", identifier: "MIT" };
  // The generator's own error schemas, now unused.
  for (const name of Object.keys(doc.components?.schemas ?? {}))
    if (name.startsWith("error.")) delete doc.components?.schemas?.[name];
  return doc;
}

const cached = new Map<boolean, OpenAPIObject>();
export function openApiDocument(production = env.isProduction): OpenAPIObject {
  let doc = cached.get(production);
  if (!doc) {
    doc = buildDocument(production);
    cached.set(production, doc);
  }
  return doc;
}
