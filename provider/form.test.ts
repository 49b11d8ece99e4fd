import { describe, expect, it } from "vitest";
import { canonicalForm, FormSyntaxError, parseForm } from "./form";

const parse = (text: string) => parseForm(new URLSearchParams(text));

describe("Stripe's bracket syntax", () => {
  it("reads hashes, indexed and appended arrays, and nested hashes", () => {
    expect(
      parse(
        "amount=1999&metadata[order_id]=o_1&metadata[a%20b]=c&expand[0]=x&expand[1]=y&types[]=a&types[]=b&created[gte]=5",
      ),
    ).toEqual({
      amount: "1999",
      metadata: { order_id: "o_1", "a b": "c" },
      expand: ["x", "y"],
      types: ["a", "b"],
      created: { gte: "5" },
    });
  });

  it("refuses a name given twice, a value that is also a hash, and a malformed name", () => {
    expect(() => parse("a=1&a=2")).toThrow(FormSyntaxError);
    expect(() => parse("a=1&a[b]=2")).toThrow(FormSyntaxError);
    expect(() => parse("a[b=1")).toThrow(FormSyntaxError);
    expect(() => parse("a[b][c][d][e]=1")).toThrow(FormSyntaxError);
  });

  it("a canonical form ignores the order of names", () => {
    expect(canonicalForm(parse("b=2&a=1&m[y]=1&m[x]=2"))).toBe(canonicalForm(parse("m[x]=2&a=1&m[y]=1&b=2")));
    expect(canonicalForm(parse("a=1"))).not.toBe(canonicalForm(parse("a=2")));
  });
});
