import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/**
 * The run's only source of chance (pure-rand's xoroshiro128+), so a seed names a run. Each
 * actor forks its own stream: one actor drawing more or less often leaves the others' draws as
 * they were. Timing still varies between runs (a real network, real processes): a seed replays
 * the attacks, not the machine's scheduling.
 */
export class Random {
  private readonly rng;
  constructor(readonly seed: number) {
    this.rng = xoroshiro128plus(seed);
  }

  /** An independent stream for one actor, derived from this one's seed and a name. */
  fork(name: string): Random {
    let h = this.seed >>> 0;
    for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
    return new Random(h);
  }

  /** An integer in [from, to]. */
  int(from: number, to: number): number {
    return uniformInt(this.rng, from, to);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return uniformFloat64(this.rng) < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A version-4-shaped UUID from this stream, for idempotency keys a seed can replay. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16));
    hex[12] = "4";
    hex[16] = ((this.int(0, 15) & 0x3) | 0x8).toString(16);
    const s = hex.join("");
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}

/** A seed for a run started without --seed. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
