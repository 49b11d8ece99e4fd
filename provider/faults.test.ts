import { describe, expect, it } from "vitest";
import {
  FaultSyntaxError,
  NO_FAULTS,
  parseFaultEnv,
  parseFaultHeader,
  planFaults,
  rollFaults,
} from "./faults";

describe("parseFaultHeader", () => {
  it("parses single faults and combinations", () => {
    expect(parseFaultHeader(undefined)).toEqual(NO_FAULTS);
    expect(parseFaultHeader("")).toEqual(NO_FAULTS);
    expect(parseFaultHeader("latency=250")).toEqual({ latencyMs: 250, error: null, drop: false });
    expect(parseFaultHeader("error=500")).toEqual({ latencyMs: 0, error: 500, drop: false });
    expect(parseFaultHeader("error")).toEqual({ latencyMs: 0, error: 500, drop: false });
    expect(parseFaultHeader("error=503")).toEqual({ latencyMs: 0, error: 503, drop: false });
    expect(parseFaultHeader(" drop , latency=10 ")).toEqual({ latencyMs: 10, error: null, drop: true });
  });

  it.each(["latency", "latency=-1", "latency=abc", "latency=999999", "error=404", "drop=maybe", "explode"])(
    "rejects %j",
    (value) => {
      expect(() => parseFaultHeader(value)).toThrow(FaultSyntaxError);
    },
  );
});

describe("parseFaultEnv / rollFaults", () => {
  it("parses probabilities and latency ranges", () => {
    expect(parseFaultEnv("error:0.1,drop:0.2,latency:0-300")).toEqual({
      errorRate: 0.1,
      dropRate: 0.2,
      latency: { minMs: 0, maxMs: 300 },
      always: NO_FAULTS,
    });
    expect(parseFaultEnv("latency:50").latency).toEqual({ minMs: 50, maxMs: 50 });
    expect(parseFaultEnv("latency=100,drop").always).toEqual({ latencyMs: 100, error: null, drop: true });
    expect(parseFaultEnv(undefined)).toEqual(parseFaultEnv(""));
  });

  it.each(["error:2", "drop:-0.1", "error:", "latency:300-10", "latency:1-2-3", "boom:0.5"])(
    "rejects %j",
    (value) => {
      expect(() => parseFaultEnv(value)).toThrow(FaultSyntaxError);
    },
  );

  it("rolls faults with the configured odds", () => {
    const config = parseFaultEnv("error:0.1,drop:0.2,latency:100-300");
    let seed = 42; // mulberry32: deterministic, so the odds check cannot flake
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const plans = Array.from({ length: 5000 }, () => rollFaults(config, random));
    const errors = plans.filter((p) => p.error !== null).length / plans.length;
    const drops = plans.filter((p) => p.drop).length / plans.length;
    expect(errors).toBeGreaterThan(0.07);
    expect(errors).toBeLessThan(0.13);
    expect(drops).toBeGreaterThan(0.16);
    expect(drops).toBeLessThan(0.24);
    expect(plans.every((p) => p.latencyMs >= 100 && p.latencyMs <= 300)).toBe(true);
    expect(new Set(plans.map((p) => p.error).filter((e) => e !== null))).toEqual(new Set([500, 503]));
  });

  it("a request's header overrides the env faults", () => {
    const always = parseFaultEnv("error:1");
    expect(planFaults("latency=5", always)).toEqual({ latencyMs: 5, error: null, drop: false });
    expect(planFaults(undefined, always).error).not.toBeNull();
    expect(planFaults(undefined, null)).toEqual(NO_FAULTS);
  });
});
