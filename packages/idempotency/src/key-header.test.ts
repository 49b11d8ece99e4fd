import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_KEY_LENGTH, parseIdempotencyKey } from "./key-header.js";

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const validKey = fc.string({ unit: printable, minLength: 1, maxLength: MAX_KEY_LENGTH });
/** RFC 9651 serialisation of a String: quoted, with `"` and `\` escaped. */
const sfString = (key: string) => `"${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

describe("parseIdempotencyKey", () => {
  it("accepts any 1..255 printable ASCII characters but a comma as a bare value", () => {
    fc.assert(
      fc.property(validKey, (key) => {
        fc.pre(!key.startsWith('"') && !key.includes(","));
        expect(parseIdempotencyKey(key)).toEqual({ ok: true, key });
      }),
    );
  });

  it("accepts any valid key in its structured-field string form, as a key apart from the bare one", () => {
    fc.assert(
      fc.property(validKey, (key) => {
        expect(parseIdempotencyKey(sfString(key))).toEqual({ ok: true, key: sfString(key) });
        fc.pre(!key.startsWith('"') && !key.includes(","));
        expect(parseIdempotencyKey(sfString(key))).not.toEqual(parseIdempotencyKey(key));
      }),
    );
  });

  it("rejects a key with any character outside 0x20-0x7E, bare or quoted", () => {
    const outside = fc.oneof(
      fc.integer({ min: 0, max: 0x1f }),
      fc.constant(0x7f),
      fc.integer({ min: 0x80, max: 0xffff }),
    );
    fc.assert(
      fc.property(validKey, outside, fc.nat(), (key, code, at) => {
        const i = at % (key.length + 1);
        const bad = key.slice(0, i) + String.fromCharCode(code) + key.slice(i);
        fc.pre(bad.length <= MAX_KEY_LENGTH);
        expect(parseIdempotencyKey(bad).ok).toBe(false);
        expect(parseIdempotencyKey(sfString(bad)).ok).toBe(false);
      }),
    );
  });

  it.each([
    ["a bare key of 255 characters", "k".repeat(255), "k".repeat(255)],
    ["a quoted key of 255 characters", `"${"k".repeat(255)}"`, `"${"k".repeat(255)}"`],
    ["a UUID", "0b5e7c1e-8c41-4f0e-9d4c-3a2b1c0d9e8f", "0b5e7c1e-8c41-4f0e-9d4c-3a2b1c0d9e8f"],
    ["a quoted key", '"abc"', '"abc"'],
    ["escapes", '"a\\"b\\\\c"', '"a\\"b\\\\c"'],
    ["a comma inside a quoted key", '"a,b"', '"a,b"'],
    ["a space inside", "order 42", "order 42"],
  ])("accepts %s", (_label, raw, key) => {
    expect(parseIdempotencyKey(raw)).toEqual({ ok: true, key });
  });

  it.each([
    ["a missing header", null],
    ["an empty header", ""],
    ["an empty quoted string", '""'],
    ["256 characters", "k".repeat(256)],
    ["256 quoted characters", `"${"k".repeat(256)}"`],
    ["an unterminated quote", '"abc'],
    ["a lone quote", '"'],
    ["text after the closing quote", '"abc"def'],
    ["parameters after the string", '"abc";v=1'],
    ["an unescaped quote inside", '"a"b"'],
    ['an escape other than \\" and \\\\', '"a\\nb"'],
    ["a trailing backslash", '"abc\\"'],
    ["a tab", "abc\tdef"],
    ["a non-ASCII letter", "clé"],
    ["a quoted non-ASCII letter", '"clé"'],
    ["two headers, joined by HTTP", "key-1, key-2"],
    ["two quoted headers, joined by HTTP", '"key-1", "key-2"'],
  ])("rejects %s", (_label, raw) => {
    const result = parseIdempotencyKey(raw);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/Idempotency-Key/);
  });
});
