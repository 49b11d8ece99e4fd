import { errorField, type Logger } from "../log";

type BetterAuthLevel = "debug" | "info" | "success" | "warn" | "error";

/**
 * better-auth's logger option, writing to the app's pino logger: one line per message with
 * `component: "better-auth"`. Object arguments become the line's fields, so pino's redaction
 * (passwords, tokens, cookies, headers) applies to them as to every other line; errors become
 * their message and stack.
 */
export function betterAuthLogger(log: Logger) {
  return {
    // Errors only: its warnings are a failed password each (our limits count those) and a base URL
    // that only matters for its HTTP routes, which are not mounted (pages call it server-side).
    level: "error" as const,
    log(level: BetterAuthLevel, message: string, ...args: unknown[]) {
      const fields: Record<string, unknown> = { component: "better-auth" };
      const extra: unknown[] = [];
      for (const arg of args) {
        if (arg instanceof Error) fields.err = errorField(arg);
        else if (arg && typeof arg === "object" && !Array.isArray(arg)) Object.assign(fields, arg);
        else extra.push(arg);
      }
      if (extra.length > 0) fields.details = extra.map(String);
      log[level === "success" ? "info" : level](fields, message);
    },
  };
}
