import { it as base } from "vitest";
import { createTestAccount } from "./fixtures";
import { startTestProvider } from "./payments";

export type TestProvider = Awaited<ReturnType<typeof startTestProvider>>;

/**
 * The shared Vitest fixtures, scoped to the file: a running payment provider process (started
 * on first use, stopped after the file's last test) and an account of the file's own. Tests and
 * suite hooks destructure what they need: `it.beforeAll(({ provider }) => …)`.
 */
export const it = base
  // biome-ignore lint/correctness/noEmptyPattern: Vitest reads a fixture's dependencies from this pattern.
  .extend("provider", { scope: "file" }, async ({}, { onCleanup }) => {
    const provider = await startTestProvider();
    onCleanup(() => provider.stop());
    return provider;
  })
  // biome-ignore lint/correctness/noEmptyPattern: Vitest reads a fixture's dependencies from this pattern.
  .extend("account", { scope: "file" }, async ({}) => createTestAccount("fixture"));
