import "#server-only";
import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";
import { env } from "../env";

export type { Logger };

/**
 * Field names that would carry a secret if a caller ever logged a header bag or an input:
 * censored by pino itself, a second line of defence behind logging none of them on purpose.
 */
export const REDACTED_PATHS = [
  "authorization",
  "cookie",
  "password",
  "token",
  "idempotencyKey",
  "headers.authorization",
  "headers.cookie",
  'headers["idempotency-key"]',
  "*.authorization",
  "*.cookie",
  "*.password",
  "*.token",
  "*.idempotencyKey",
];

type ErrorListener = (args: unknown[]) => void;
// Beside the logger on globalThis: a re-evaluated module must reach the listeners the logger calls.
const holder = globalThis as unknown as { logger?: Logger; logErrorListeners?: Set<ErrorListener> };
holder.logErrorListeners ??= new Set();
const errorListeners = holder.logErrorListeners;

/** Called with the arguments of every line logged at error level or above (the tests' guard). */
export function onErrorLogged(listener: ErrorListener): () => void {
  errorListeners.add(listener);
  return () => errorListeners.delete(listener);
}

export function createLogger(
  opts: { level?: string; format?: "json" | "pretty"; destination?: DestinationStream } = {},
): Logger {
  const format = opts.format ?? env.LOG_FORMAT;
  const destination =
    opts.destination ??
    (format === "pretty"
      ? pretty({ sync: true, colorize: process.stdout.isTTY, ignore: "pid,hostname" })
      : undefined);
  return pino(
    {
      level: opts.level ?? env.LOG_LEVEL,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      hooks: {
        logMethod(args, method, level) {
          if (level >= 50) for (const listener of errorListeners) listener(args);
          return method.apply(this, args);
        },
      },
    },
    destination,
  );
}

// One logger per process; Next's dev server reloads modules, so keep it on globalThis.
holder.logger ??= createLogger();
export const logger: Logger = holder.logger;

/** An error as a log field: its message and stack, never its enumerable extras (a query's parameters). */
export function errorField(error: unknown): { message: string; name?: string; stack?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { message: String(error) };
}
