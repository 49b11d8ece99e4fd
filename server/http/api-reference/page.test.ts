import { gzipSync } from "node:zlib";
import { createClient, memoryStore } from "@idempotent-checkout/client";
import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, openApiDocument } from "../openapi";
import { SDK_PACKAGE } from "./code-samples";
import { EXPLORER_PATH, markdown, renderReferencePage } from "./page";

type Samples = { lang: string; label: string; source: string }[];
const doc = openApiDocument();
const operations = Object.values(doc.paths ?? {}).flatMap((item) =>
  Object.values(item as Record<string, { operationId: string; "x-codeSamples"?: Samples }>),
);
const samplesOf = (id: string) => operations.find((op) => op.operationId === id)?.["x-codeSamples"] ?? [];

describe("the API reference page", () => {
  const html = renderReferencePage(doc, EXPLORER_PATH, OPENAPI_PATH);

  it("is light: no script, under 100 kB and under 20 kB compressed (the Scalar bundle is 1.4 MB compressed)", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html.length).toBeLessThan(100_000);
    expect(gzipSync(html).length).toBeLessThan(20_000);
  });

  it("lists every operation in its table of contents and documents it under its own heading", () => {
    expect(operations.length).toBeGreaterThan(10);
    for (const op of operations) {
      expect(html).toContain(`<a href="#op-${op.operationId}">`);
      expect(html).toContain(`<h3 id="op-${op.operationId}">`);
    }
    expect(html).toContain('<h3 id="schema-Payment">Payment</h3>');
    // A named schema is a link to its section.
    expect(html).toContain('<a href="#schema-Problem">Problem</a>');
  });

  it("shows the SDK's call in the samples of the operations it covers, curl for all", () => {
    const pay = samplesOf("payments-create");
    expect(pay.map((s) => s.label)).toEqual([SDK_PACKAGE, "curl"]);
    expect(pay[0]?.source).toContain(`from "${SDK_PACKAGE}"`);
    expect(pay[1]?.source).toContain('-H "Idempotency-Key: $(uuidgen)"');
    expect(html).toContain(`<figcaption>${SDK_PACKAGE}</figcaption>`);
    expect(html).toContain("client.payments.create(");
    for (const op of operations) expect(op["x-codeSamples"]?.some((s) => s.label === "curl")).toBe(true);
    // The refunds API is not in the SDK: curl only.
    expect(samplesOf("admin-refunds-create").map((s) => s.label)).toEqual(["curl"]);
  });

  it("every SDK call a sample makes is a function of the SDK's client", () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "sk_test_x", store: memoryStore() });
    const calls = operations
      .flatMap((op) => op["x-codeSamples"] ?? [])
      .filter((s) => s.label === SDK_PACKAGE)
      .flatMap((s) => [...s.source.matchAll(/client\.(\w+)(?:\.(\w+))?\(/g)]);
    expect(calls.length).toBeGreaterThanOrEqual(6);
    for (const [call, group = "", method] of calls) {
      const target = (client as unknown as Record<string, unknown>)[group];
      const fn = method ? (target as Record<string, unknown> | undefined)?.[method] : target;
      expect(typeof fn, call).toBe("function");
    }
  });

  it("renders the descriptions' Markdown, escaping what is not Markdown", () => {
    expect(markdown("A `key` and **409**.\n\n- one\n- two")).toBe(
      "<p>A <code>key</code> and <strong>409</strong>.</p>\n<ul><li>one</li><li>two</li></ul>",
    );
    expect(markdown("| a | b |\n| --- | --- |\n| 1 | <x> |")).toContain("<td>&lt;x&gt;</td>");
  });
});
