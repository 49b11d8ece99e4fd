import { createHash } from "node:crypto";

/**
 * One text form per value: object keys sorted, strings NFC-normalised, numbers in JavaScript's
 * shortest round-trip form (so 1, 1.0 and 1e0 agree), undefined fields dropped as JSON does.
 */
export function canonicalize(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.normalize("NFC"));
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("Cannot fingerprint a non-finite number");
      return JSON.stringify(Object.is(value, -0) ? 0 : value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (Array.isArray(value))
        return `[${value.map((v) => (v === undefined ? "null" : canonicalize(v))).join(",")}]`;
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      // Two keys can be one string in two spellings ("é" and "e\u0301"): ties on the key are
      // ordered by value, so that the key order of the input never shows through.
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k.normalize("NFC"), canonicalize(v)] as const)
        .sort(([ka, va], [kb, vb]) => compareText(ka, kb) || compareText(va, vb));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
    }
    default:
      throw new TypeError(`Cannot fingerprint a ${typeof value}`);
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The fields of the input that define the operation; volatile ones stay out of the hash. */
export function pickFields(input: unknown, fields: readonly string[] | undefined): unknown {
  if (!fields || input === null || typeof input !== "object") return input ?? null;
  const source = input as Record<string, unknown>;
  return Object.fromEntries(fields.map((f) => [f, source[f]]));
}

export function fingerprint(procedurePath: string, params: unknown): string {
  return createHash("sha256")
    .update(`${procedurePath}\n${canonicalize(params)}`)
    .digest("hex");
}
