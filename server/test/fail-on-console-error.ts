import { afterEach, vi } from "vitest";

// A test that makes the code log an error has found a problem even if its assertions pass.
const spy = vi.spyOn(console, "error");
afterEach(() => {
  const calls = spy.mock.calls;
  spy.mockClear();
  if (calls.length > 0)
    throw new Error(`console.error was called:\n${calls.map((c) => c.join(" ")).join("\n")}`);
});
