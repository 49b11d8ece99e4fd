import { describe, expect, it } from "vitest";
import { Random } from "./random";

describe("the run's randomness", () => {
  it("is the same for the same seed, and each actor's stream is its own", () => {
    const draws = (r: Random) => Array.from({ length: 20 }, () => r.int(0, 1000));
    expect(draws(new Random(7))).toEqual(draws(new Random(7)));
    expect(draws(new Random(7))).not.toEqual(draws(new Random(8)));
    const a = new Random(7);
    const first = draws(a.fork("shopper-0"));
    a.int(0, 10); // another actor drawing does not move this one's stream
    expect(draws(a.fork("shopper-0"))).toEqual(first);
    expect(draws(a.fork("shopper-1"))).not.toEqual(first);
  });

  it("makes keys shaped like v4 UUIDs", () => {
    expect(new Random(1).uuid()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});
