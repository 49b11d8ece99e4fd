/**
 * Helpers of the adapter's tests (not a test file itself): they run against the simulator process,
 * which the tests share, so every key is fresh.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import type { ProviderError } from "./errors";

export const key = (label: string) => `adapter-${label}-${randomUUID()}`;
export const visa = { amount: 1999, currency: "EUR", paymentMethod: "pm_card_visa" };

/** The error a call throws (fails the test if it does not). */
export async function failure(call: Promise<unknown>): Promise<ProviderError> {
  try {
    await call;
  } catch (err) {
    return err as ProviderError;
  }
  throw new Error("expected the call to fail");
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Presses a 3-D Secure challenge page's button as a browser would; returns where it sent the browser. */
export async function press(pageUrl: string, action: "complete" | "fail"): Promise<URL> {
  const res = await fetch(pageUrl, {
    method: "POST",
    body: new URLSearchParams({ action }),
    redirect: "manual",
  });
  if (res.status !== 303) throw new Error(`the challenge answered ${res.status}, not 303`);
  return new URL(res.headers.get("location") ?? "");
}
