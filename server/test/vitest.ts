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
  .extend("provider", { scope: "file" }, async (_, { onCleanup }) => {
    const provider = await startTestProvider();
    onCleanup(() => provider.stop());
    return provider;
  })
  .extend("account", { scope: "file" }, () => createTestAccount("fixture"));
