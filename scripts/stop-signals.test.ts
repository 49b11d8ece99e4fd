import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { takeMessagingTurn } from "../server/test/messaging/exclusive";
import { startApiProcess, startWorkerProcess } from "../server/test/processes";

// Ctrl-C reaches the whole process group, and a supervisor may send SIGTERM on top: a second
// signal while stopping must not end the process mid-stop (exit 130 or 143 instead of 0).
describe("a second signal while stopping", () => {
  const env = { DATABASE_URL: process.env.DATABASE_URL ?? "", PAYMENT_PROVIDER_URL: "http://127.0.0.1:9" };
  // The worker runs a relay and a receipts consumer on the shared test database, and declares
  // the queues with its production settings (60 s ack timeout): not while a messaging test runs.
  let release: () => Promise<void>;
  beforeAll(async () => {
    release = await takeMessagingTurn();
  }, 180_000);
  afterAll(async () => {
    await release?.();
  });

  it.each([
    ["npm run worker", () => startWorkerProcess(env)],
    ["the API tier (scripts/api.ts)", () => startApiProcess(env)],
  ])("%s still stops cleanly, exit code 0", async (_name, start) => {
    const started = await start();
    // Running for a while first: the worker's queue connection starts after its ready line, and a
    // stop before that is over too soon for a second signal to land in it.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    process.kill(started.pid, "SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 1));
    process.kill(started.pid, "SIGINT");
    expect(await started.exited).toBe(0);
  });
});
