import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { z } from "zod";
import type { Context } from "./context";
import { DATABASE_UNAVAILABLE_MESSAGE, databaseUnavailable } from "./db/unavailable";
import { ErrorDetails } from "./errors";
import {
  checkIdempotentCall,
  type IdempotencyHandle,
  type IdempotencyOptions,
  idempotent,
  StoredReplay,
} from "./idempotency";
import { consume, LIMIT_RULES, type LimitName } from "./limits";

/**
 * Procedure metadata: the HTTP layers check the key header of idempotent ones before anything;
 * `openapi` exposes a procedure on the REST surface (/api/v1) and in /api/openapi.json.
 */
export type Meta = OpenApiMeta<{ idempotent?: boolean }>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // Stacks never leave the server: replays must be byte-identical and stacks leak internals.
    isDev: false,
    errorFormatter({ shape, error }) {
      const { stack: _stack, ...data } = shape.data;
      // Lost database (a failover, a restart): retryable, so 503 rather than an internal error.
      if (error.code === "INTERNAL_SERVER_ERROR" && databaseUnavailable(error.cause))
        return {
          ...shape,
          message: DATABASE_UNAVAILABLE_MESSAGE,
          data: { ...data, code: "SERVICE_UNAVAILABLE" as const, httpStatus: 503 },
        };
      return {
        ...shape,
        // An unexpected error's own message may name internals (SQL, env variables): logged, not sent.
        message: error.code === "INTERNAL_SERVER_ERROR" ? "Internal server error." : shape.message,
        data: {
          ...data,
          ...(error.cause instanceof ErrorDetails ? { details: error.cause.details } : {}),
          ...(error.cause instanceof z.ZodError
            ? { fieldErrors: z.flattenError(error.cause).fieldErrors }
            : {}),
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;
export const publicProcedure = t.procedure;

const requireAccount = t.middleware(({ ctx, next }) => {
  const account = ctx.principal.account;
  if (!account)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send a valid Bearer token." });
  return next({ ctx: { account } });
});

export const authedProcedure = t.procedure.use(requireAccount);

/**
 * Spends one of the account's points for this kind of call; 429 with Retry-After once spent.
 * After an idempotent procedure's key check it runs only for work that is new (a claim or a
 * takeover): replays, 409s and 422s are answered before it and cost nothing. Its error carries
 * a retry time, so the key is released rather than stored (docs/decisions/0026).
 */
export function limitedBy(name: LimitName) {
  return t.middleware(async ({ ctx, next }) => {
    const account = ctx.principal.account;
    if (!account)
      throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send a valid Bearer token." });
    // A replayed stored answer does no work, so it costs nothing against the limit.
    if ((ctx as { idempotency?: unknown }).idempotency instanceof StoredReplay) return next();
    const limit = await consume(LIMIT_RULES[name], account.id);
    if (!limit.ok) {
      ctx.resHeaders.set("Retry-After", String(limit.retryAfterSeconds));
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: `Too many requests: retry after ${limit.retryAfterSeconds} s.`,
        cause: new ErrorDetails({ reason: "rate_limited" }, limit.retryAfterSeconds),
      });
    }
    return next();
  });
}

export const adminProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.principal.isAdmin)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Admin authentication required." });
  return next();
});

const requireIdempotencyKey = t.middleware(({ ctx, next }) => {
  const checked = checkIdempotentCall(ctx.reqHeaders.get("idempotency-key"), ctx.transport);
  if (!checked.ok) throw new TRPCError({ code: "BAD_REQUEST", message: checked.reason });
  return next({ ctx: { idempotencyKey: checked.key } });
});

/** The key header is checked first, before authentication and input validation. */
const keyedProcedure = t.procedure.meta({ idempotent: true }).use(requireIdempotencyKey).use(requireAccount);

/**
 * A mutation that runs at most once per (account, Idempotency-Key), named by its owner's
 * constant (`options.procedure`). Its resolver is wrapped in `replayable`, which answers a
 * replay, and gets `ctx.idempotency` for atomic phases and the fenced final transaction.
 */
export function idempotentProcedure<TSchema extends z.ZodType>(
  input: TSchema,
  options: IdempotencyOptions<z.output<TSchema>>,
) {
  const middleware = idempotent<z.output<TSchema>>(options);
  // `next` passed through a lambda, so tRPC sees the context the middleware adds.
  return keyedProcedure
    .input(input)
    .use(({ ctx, input: parsed, next }) =>
      middleware({ ctx, input: parsed, next: (o: { ctx: { idempotency: IdempotencyHandle } }) => next(o) }),
    );
}
