import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize, fingerprint, pickFields } from "./fingerprint.js";

const PATH = "payments.pay";

// Strings rich in characters with several Unicode spellings (é, Å, ñ, 가 precomposed and
// decomposed, the Ångström sign), characters JSON must escape, and the ligature ﬁ, which NFC
// keeps apart from "fi".
const unit = fc.oneof(
  fc.constantFrom("e", "\u0301", "\u00e9", "A", "\u030a", "\u00c5", "\u212b", "n", "\u0303", "\u00f1"),
  fc.constantFrom("\uac00", "\u1100", "\u1161", "\ufb01", "f", "i", '"', "\\", "\n", "\u2028", "\u{1f600}"),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
);
const json = fc.jsonValue({ stringUnit: unit, maxDepth: 4 });
// Field names as a schema has them; values anything JSON can carry.
const fieldName = fc.string({ unit: fc.constantFrom("a", "b", "c", "d", "_"), minLength: 1, maxLength: 4 });
const params = fc.dictionary(fieldName, json, { minKeys: 1, maxKeys: 6 });

type Json = fc.JsonValue;
const isObject = (v: unknown): v is Record<string, Json> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** A small seeded PRNG: the rewrite's many choices, reproducible from fast-check's seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(next() * choices.length)] as T;
  const shuffle = <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  };
  return { pick, shuffle };
}

/** Another JSON text of the same value: random whitespace, key order, escapes and number forms. */
function rewrite(v: Json, seed: number): string {
  const { pick, shuffle } = random(seed);
  const ws = () => pick(["", "", " ", "\t", "\n", "\r\n", "  "]);
  const str = (s: string) =>
    `"${s
      .split("")
      .map((u) =>
        pick([true, false])
          ? `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`
          : JSON.stringify(u).slice(1, -1),
      )
      .join("")}"`;
  const num = (n: number) => {
    const plain = JSON.stringify(n);
    if (/[.e]/.test(plain)) return pick([plain, n.toExponential()]);
    // "00e-1" would be a leading zero, which JSON forbids.
    return pick([plain, `${plain}.0`, `${plain}e0`, `${plain}.000E+0`, ...(n === 0 ? [] : [`${plain}0e-1`])]);
  };
  const write = (x: Json): string => {
    if (x === null) return "null";
    if (typeof x === "string") return str(x);
    if (typeof x === "number") return num(x);
    if (typeof x === "boolean") return String(x);
    if (Array.isArray(x)) return `[${x.map((e) => ws() + write(e) + ws()).join(",")}]`;
    const entries = Object.entries(x).filter((e): e is [string, Json] => e[1] !== undefined);
    return `{${shuffle(entries)
      .map(([k, e]) => `${ws()}${str(k)}${ws()}:${ws()}${write(e)}${ws()}`)
      .join(",")}}`;
  };
  return ws() + write(v) + ws();
}

function mapStrings(v: Json, f: (s: string) => string): Json {
  if (typeof v === "string") return f(v);
  if (Array.isArray(v)) return v.map((e) => mapStrings(e, f));
  if (isObject(v))
    return Object.fromEntries(Object.entries(v).map(([k, e]) => [f(k), mapStrings(e as Json, f)]));
  return v;
}

/** Two keys of one object that are the same text once normalised would merge under mapStrings. */
function hasEquivalentKeys(v: Json): boolean {
  if (Array.isArray(v)) return v.some(hasEquivalentKeys);
  if (!isObject(v)) return false;
  const keys = Object.keys(v);
  return (
    new Set(keys.map((k) => k.normalize("NFC"))).size !== keys.length ||
    Object.values(v).some((e) => hasEquivalentKeys(e as Json))
  );
}

/** The oracle, written apart from canonicalize: same JSON value up to NFC and -0. */
function sameValue(a: Json | undefined, b: Json | undefined): boolean {
  if (typeof a === "string" && typeof b === "string") return a.normalize("NFC") === b.normalize("NFC");
  if (typeof a === "number" && typeof b === "number") return a === b;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((e, i) => sameValue(e, b[i]));
  if (isObject(a) && isObject(b)) {
    const norm = (o: Record<string, Json>) =>
      new Map(
        Object.entries(o)
          .filter(([, e]) => e !== undefined)
          .map(([k, e]) => [k.normalize("NFC"), e]),
      );
    const [ma, mb] = [norm(a), norm(b)];
    return ma.size === mb.size && [...ma].every(([k, e]) => mb.has(k) && sameValue(e, mb.get(k)));
  }
  return a === b;
}

/** Values near `v` that a careless canonical form might confuse with it. */
function neighbours(v: Json | undefined): (Json | undefined)[] {
  const out: (Json | undefined)[] = [
    undefined,
    null,
    "null",
    [],
    {},
    [v ?? null],
    { v: v ?? null },
    0,
    "",
    false,
  ];
  if (typeof v === "number") out.push(String(v), v + 1, -v, [v]);
  if (typeof v === "string") out.push(Number(v), `${v} `, v.toUpperCase(), v.normalize("NFKC"), `${v}\u0301`);
  if (typeof v === "boolean") out.push(!v, String(v));
  if (Array.isArray(v)) out.push(v.slice(1), [...v].reverse(), [...v, null]);
  if (isObject(v)) out.push({ ...v, extra: null }, Object.values(v) as Json[]);
  return out.filter((n) => !(typeof n === "number" && !Number.isFinite(n)));
}

describe("fingerprint: what never changes it", () => {
  it("any other JSON text of the same value: whitespace, key order, escapes, 1 / 1.0 / 1e0", () => {
    fc.assert(
      fc.property(json, fc.integer(), (v, seed) => {
        const text = rewrite(v, seed);
        expect(fingerprint(PATH, JSON.parse(text)), text).toBe(fingerprint(PATH, v));
      }),
      { numRuns: 500 },
    );
  });

  it("key order, even between keys that are two spellings of one string", () => {
    const spelled = fc.constantFrom("\u00e9", "e\u0301", "\u00c5", "A\u030a", "\u212b", "a");
    const entries = fc.uniqueArray(fc.tuple(spelled, json), {
      selector: ([k]) => k,
      minLength: 2,
      maxLength: 5,
    });
    fc.assert(
      fc.property(entries, fc.integer(), (e, seed) => {
        const reordered = Object.fromEntries(random(seed).shuffle(e));
        expect(fingerprint(PATH, reordered)).toBe(fingerprint(PATH, Object.fromEntries(e)));
      }),
      { numRuns: 300 },
    );
  });

  it("the Unicode spelling of any string: NFC, NFD or a mix", () => {
    fc.assert(
      fc.property(json, fc.gen(), (v, g) => {
        fc.pre(!hasEquivalentKeys(v));
        const respelled = mapStrings(v, (s) => s.normalize(g(fc.constantFrom, "NFC", "NFD")));
        expect(fingerprint(PATH, respelled)).toBe(fingerprint(PATH, v));
      }),
      { numRuns: 300 },
    );
  });

  it("fields left out of the definition: volatile values such as trace ids", () => {
    fc.assert(
      fc.property(params, fc.dictionary(fc.string(), json, { maxKeys: 4 }), (defining, volatile) => {
        const fields = Object.keys(defining);
        const extra = Object.fromEntries(Object.entries(volatile).filter(([k]) => !fields.includes(k)));
        const withVolatile = { ...extra, ...defining };
        expect(fingerprint(PATH, pickFields(withVolatile, fields))).toBe(fingerprint(PATH, defining));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["1", "1.0"],
    ["1", "1e0"],
    ["0", "-0"],
    ['{"a":1,"b":[1,{"c":"x"}]}', ' { "b" : [ 1.0 , { "c" : "\\u0078" } ] ,\n\t"a" : 1 } '],
    ['"\u00e9"', '"e\u0301"'],
    ['{"\u00c5":1}', '{"A\u030a":1}'],
  ])("%s and %s", (a, b) => {
    expect(fingerprint(PATH, JSON.parse(b))).toBe(fingerprint(PATH, JSON.parse(a)));
  });

  it("a Date and the ISO text the wire carries for it", () => {
    const at = new Date("2026-08-02T10:00:00.000Z");
    expect(fingerprint(PATH, { at })).toBe(fingerprint(PATH, { at: at.toISOString() }));
  });
});

describe("fingerprint: what always changes it", () => {
  it("any change to a defining field: another value, another type, null, missing", () => {
    fc.assert(
      fc.property(params, fc.gen(), (defining, g) => {
        fc.pre(!hasEquivalentKeys(defining));
        const fields = Object.keys(defining);
        const field = g(fc.constantFrom, ...fields);
        const old = defining[field];
        const near = neighbours(old);
        const pick = g(fc.integer, { min: -1, max: near.length - 1 });
        const replacement = pick < 0 ? g(() => json) : near[pick];
        fc.pre(!sameValue(old, replacement));
        const changed: Record<string, Json | undefined> = { ...defining, [field]: replacement };
        if (replacement === undefined) delete changed[field];
        expect(fingerprint(PATH, pickFields(changed, fields))).not.toBe(
          fingerprint(PATH, pickFields(defining, fields)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("the procedure path", () => {
    const path = fc.stringMatching(/^[a-z]{1,8}(\.[a-z]{1,8}){0,2}$/);
    fc.assert(
      fc.property(path, path, json, (p1, p2, v) => {
        fc.pre(p1 !== p2);
        expect(fingerprint(p1, v)).not.toBe(fingerprint(p2, v));
      }),
    );
  });

  it.each([
    ['{"amount":1}', '{"amount":"1"}'],
    ['{"amount":null}', "{}"],
    ['{"a":null}', '{"a":"null"}'],
    ['{"a":[]}', '{"a":{}}'],
    ['{"a":true}', '{"a":"true"}'],
    ['{"a":[1,2]}', '{"a":[2,1]}'],
    ['{"a":[1]}', '{"a":1}'],
    ['{"a":"fi"}', '{"a":"\ufb01"}'],
    ['{"a":{"b":1}}', '{"a.b":1}'],
  ])("%s against %s", (a, b) => {
    expect(fingerprint(PATH, JSON.parse(b))).not.toBe(fingerprint(PATH, JSON.parse(a)));
  });
});

describe("canonical form", () => {
  it("is the sha256 hex of the path and one text per value", () => {
    expect(canonicalize({ b: [1, "é"], a: null, c: undefined })).toBe('{"a":null,"b":[1,"é"]}');
    expect(fingerprint(PATH, {})).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses values JSON cannot carry rather than hashing them to null", () => {
    expect(() => canonicalize({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalize({ a: Number.POSITIVE_INFINITY })).toThrow(TypeError);
    expect(() => canonicalize({ a: () => 1 })).toThrow(TypeError);
  });
});
