import { type SpecData, Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { openApiDocument } from "./openapi";
import { PROBLEM_TYPES, problemTypeUri } from "./problems";

type Response = { headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> };
type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, Response>;
};

const doc = openApiDocument() as unknown as {
  openapi: string;
  servers: { url: string }[];
  info: { description: string; license?: { name: string; identifier?: string } };
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  paths: Record<string, Record<string, Operation>>;
};
const routes = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${doc.servers[0]?.url}${path}`),
  );

describe("GET /api/openapi.json", () => {
  it("validates against the OpenAPI 3.1 schema, and every $ref resolves", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as SpecData);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
    // The validator does reject a broken document (here, one without info).
    const broken = structuredClone(doc) as unknown as Record<string, unknown>;
    delete broken.info;
    expect((await new Validator().validate(broken as unknown as SpecData)).valid).toBe(false);
  });

  it("lists every /api/v1 route: the issue's five, refunds (issue 28), capture and cancel (issue 40), webhooks (issue 41), and every procedure with OpenAPI metadata", () => {
    expect(routes().sort()).toEqual(
      [
        "GET /api/v1/orders/{id}",
        "GET /api/v1/payments/{id}",
        "GET /api/v1/products",
        "POST /api/v1/orders",
        "POST /api/v1/payments",
        "POST /api/v1/refunds",
        "POST /api/v1/payments/{id}/capture",
        "POST /api/v1/payments/{id}/cancel",
        "DELETE /api/v1/webhook_endpoints/{id}",
        "GET /api/v1/webhook_endpoints",
        "GET /api/v1/webhook_endpoints/{id}/deliveries",
        "POST /api/v1/webhook_endpoints",
        "POST /api/v1/webhook_endpoints/{id}/replay",
        "POST /api/v1/webhook_endpoints/{id}/rotate_secret",
        "POST /api/v1/webhook_endpoints/{id}/test",
        "POST /api/v1/webhook_messages/{id}/replay",
      ].sort(),
    );
    const procedures = Object.values(
      appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>,
    )
      .flatMap(({ _def: { meta } }) =>
        meta?.openapi ? [`${meta.openapi.method} /api/v1${meta.openapi.path}`] : [],
      )
      .sort();
    expect(routes().sort()).toEqual(procedures);
  });

  it("payment creation requires Idempotency-Key and declares its problems, Retry-After and the replay header", () => {
    const op = doc.paths["/payments"]?.post as Operation;
    expect(op.parameters).toContainEqual(
      expect.objectContaining({ in: "header", name: "Idempotency-Key", required: true }),
    );
    for (const status of ["400", "402", "409", "422", "503"]) {
      expect(op.responses[status]?.content).toEqual({
        "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
      });
    }
    expect(op.responses["409"]?.headers).toHaveProperty("Retry-After");
    for (const status of ["200", "402"])
      expect(op.responses[status]?.headers).toHaveProperty("Idempotent-Replayed");
  });

  it("declares every error of every operation as a problem, and lists every problem type", () => {
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item))
        for (const [status, response] of Object.entries(op.responses))
          if (Number(status) >= 400)
            expect(Object.keys(response.content ?? {})).toEqual(["application/problem+json"]);
    for (const slug of Object.keys(PROBLEM_TYPES))
      expect(doc.info.description).toContain(problemTypeUri(slug as keyof typeof PROBLEM_TYPES));
  });
});

describe("who may call each operation, and what a refusal carries", () => {
  const op = (path: string, method: string) => doc.paths[path]?.[method] as Operation;

  it("public operations say security: [], the customers' name the API key, refunds the operators' token", () => {
    expect(op("/products", "get").security).toEqual([]);
    for (const [path, method] of [
      ["/orders", "post"],
      ["/orders/{id}", "get"],
      ["/payments", "post"],
      ["/payments/{id}", "get"],
    ] as const)
      expect(op(path, method).security).toEqual([{ ApiKey: [] }]);
    expect(op("/refunds", "post").security).toEqual([{ AdminToken: [] }]);
    expect(op("/payments/{id}/capture", "post").security).toEqual([{ AdminToken: [] }]);
    expect(op("/payments/{id}/cancel", "post").security).toEqual([{ AdminToken: [] }]);
    expect(doc.components.securitySchemes.AdminToken).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("the operations a read-only key or a spent allowance refuses document 403 and 429 (with Retry-After)", () => {
    for (const path of ["/orders", "/payments"]) {
      const responses = op(path, "post").responses;
      expect(Object.keys(responses)).toEqual(expect.arrayContaining(["403", "429"]));
      expect(responses["429"]?.headers).toHaveProperty("Retry-After");
    }
  });

  it("every 401 names the scheme in WWW-Authenticate; the document has a licence", () => {
    for (const item of Object.values(doc.paths))
      for (const operation of Object.values(item))
        if (operation.responses["401"])
          expect(operation.responses["401"].headers).toHaveProperty("WWW-Authenticate");
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
  });
});

describe("the OpenAPI document in production", () => {
  it("names no demo key (they are refused there), development's does", () => {
    const production = JSON.stringify(openApiDocument(true));
    expect(production).not.toMatch(/sk_test_|alice|bob/);
    expect(production).toContain("sk_live_");
    expect(JSON.stringify(openApiDocument(false))).toContain("sk_test_alice");
  });
});
