import { contextFor, type TestAccount } from "./fixtures";
import { createTestCaller, hooks } from "./idempotent-router";

/**
 * Child process of crash.test.ts: calls the test procedure and, inside its fenced completion
 * transaction (the business row written, the completion not yet), prints `inside transaction`
 * and hangs until the parent SIGKILLs it.
 * Usage: tsx crash-in-completion.ts '<{"account": TestAccount, "key": string, "input": {...}}>'
 */
const { account, key, input } = JSON.parse(process.argv[2] ?? "") as {
  account: TestAccount;
  key: string;
  input: { amount: number; note: string };
};

hooks.beforeComplete = async () => {
  process.stdout.write("inside transaction\n");
  await new Promise(() => setInterval(() => {}, 60_000));
};

await createTestCaller(contextFor(account, { "idempotency-key": key })).effect(input);
process.stdout.write("completed\n");
process.exit(0);
