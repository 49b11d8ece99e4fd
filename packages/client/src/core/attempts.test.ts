import { describe, expect, it } from "vitest";
import { type Attempt, type Progress, untilFinal } from "./attempts.js";

const noAnswer = (): Attempt<string> => ({
  ok: false,
  status: undefined,
  retryAfterMs: undefined,
  error: "reset",
});
const answer = (status: number, retryAfterMs?: number): Attempt<string> => ({
  ok: false,
  status,
  retryAfterMs,
  error: { status },
});

/** A loop whose clock moves only when it sleeps; each attempt takes the next scripted result. */
function scripted(results: Attempt<string>[], policy = {}) {
  let clock = 0;
  const sleeps: number[] = [];
  const progress: Progress[] = [];
  let sent = 0;
  const run = untilFinal(
    async () => {
      sent++;
      return results.shift() ?? noAnswer();
    },
    {
      policy: { baseDelayMs: 100, maxDelayMs: 1000, deadlineMs: 10_000, ...policy },
      now: () => clock,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      onProgress: (p) => progress.push(p),
    },
  );
  return { run, sleeps, progress, sent: () => sent };
}

describe("untilFinal: the one attempt loop", () => {
  it("retries what the policy retries, waiting Retry-After or the jittered backoff, until a success", async () => {
    const { run, sleeps, progress } = scripted([
      noAnswer(),
      answer(503),
      answer(409, 2000),
      answer(429),
      { ok: true, value: "paid" },
    ]);
    expect(await run).toEqual({ kind: "succeeded", value: "paid" });
    expect(sleeps).toEqual([50, 100, 2000, 400]);
    expect(progress.filter((p) => p.retry).map((p) => p.retry?.reason)).toEqual([
      "network",
      "server",
      "in_flight",
      "server",
    ]);
  });

  it("ends at a final answer without retrying it", async () => {
    const { run, sent } = scripted([answer(402, 1000)]);
    expect(await run).toMatchObject({ kind: "final", failure: { status: 402 } });
    expect(sent()).toBe(1);
  });

  it("does not send a keyless request again after no answer", async () => {
    let sent = 0;
    const settled = await untilFinal(
      async () => {
        sent++;
        return noAnswer();
      },
      { retryUnanswered: false },
    );
    expect(settled).toMatchObject({ kind: "final", failure: { status: undefined } });
    expect(sent).toBe(1);
  });

  it("gives up before a wait that would pass the deadline, with the last failure", async () => {
    const { run, sleeps, sent } = scripted([], { deadlineMs: 1000 });
    const settled = await run;
    expect(settled).toMatchObject({ kind: "deadline", failure: { status: undefined } });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(1000);
    expect(settled.kind === "deadline" && settled.attempts).toBe(sent());
  });

  it("gives up at once when Retry-After points past the deadline", async () => {
    const { run, sleeps } = scripted([answer(429, 60_000)], { deadlineMs: 5000 });
    expect(await run).toMatchObject({ kind: "deadline", failure: { status: 429 }, attempts: 1 });
    expect(sleeps).toEqual([]);
  });

  it("aborts an attempt at attemptTimeoutMs", async () => {
    let calls = 0;
    const settled = await untilFinal<string>(
      (signal) => {
        calls++;
        if (calls > 1) return Promise.resolve({ ok: true, value: "second" });
        return new Promise((resolve) =>
          signal.addEventListener("abort", () =>
            resolve({ ok: false, status: undefined, retryAfterMs: undefined, error: signal.reason }),
          ),
        );
      },
      { policy: { attemptTimeoutMs: 20, baseDelayMs: 1 } },
    );
    expect(settled).toEqual({ kind: "succeeded", value: "second" });
  });
});
