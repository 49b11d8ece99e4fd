import { afterEach, vi } from "vitest";
import { onErrorLogged } from "../log";

// A test that makes the code log an error (through the logger or console.error) has found a
// problem even if its assertions pass.
const spy = vi.spyOn(console, "error");
const logged: unknown[][] = [];
onErrorLogged((args) => logged.push(args));
afterEach(() => {
  const calls = [...spy.mock.calls, ...logged.splice(0)];
  spy.mockClear();
  if (calls.length > 0)
    throw new Error(
      `an error was logged:\n${calls.map((c) => c.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")).join("\n")}`,
    );
});
