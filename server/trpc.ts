import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { z } from "zod";
import { looksLikeApiKey } from "./auth/api-key-format";
import { clientAddress } from "./auth/client-address";
import { recordAdminRefusal, recordRoleRefusal } from "./auth/refusals";
import { type AdminRole, roleAllows } from "./auth/roles";
import type { Context } from "./context";
import { DATABASE_UNAVAILABLE_MESSAGE, databaseUnavailable } from "./db/unavailable";
import { ErrorDetails, errorDetailsOf } from "./errors";
import { idempotency, type ProcedureOptions } from "./keys";
import { consume, LIMIT_RULES, type LimitName } from "./limits";

/**
 * Procedure metadata: the HTTP layers check the key header of idempotent ones before anything;
 * `openapi` exposes a procedure on the REST surface (/api/v1) and in /api/openapi.json.
 */
/** `admin`: authenticated as an operator (ADMIN_TOKEN), which the OpenAPI document says. */
export type Meta = OpenApiMeta<{ idempotent?: boolean; admin?: boolean }>;

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
      const details = errorDetailsOf(error)?.details;
      return {
        ...shape,
        // An unexpected error's own message may name internals (SQL, env variables): logged, not sent.
        message: error.code === "INTERNAL_SERVER_ERROR" ? "Internal server error." : shape.message,
        data: {
          ...data,
          ...(details ? { details } : {}),
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

const requireAccount = t.middleware(({ ctx, type, next }) => {
  const account = ctx.principal.account;
  if (!account)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send a valid Bearer token." });
  // A read-only API key reads; it changes nothing (decision 0062).
  if (type === "mutation" && ctx.principal.apiKeyScope === "read_only")
    throw new TRPCError({ code: "FORBIDDEN", message: "This API key is read-only." });
  return next({ ctx: { account } });
});

export const authedProcedure = t.procedure.use(requireAccount);

/**
 * The account signed in with its session cookie, never an API key: managing keys is done by the
 * person, so a leaked key cannot mint more keys or revoke its owner's (decision 0062).
 */
export const sessionProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.principal.apiKeyScope !== undefined)
    throw new TRPCError({
      code: "FORBIDDEN",
      message: "API keys are managed from a signed-in session only.",
    });
  return next();
});

/**
 * Spends one of the account's points for this kind of call; 429 with Retry-After once spent.
 * For an idempotent procedure pass `admittedBy(name)` as its `admit` option instead: the layer
 * then asks only for work that is new (replays, 409s and 422s cost nothing) and undoes the
 * claim's writes with the refusal (docs/decisions/0026).
 */
export function limitedBy(name: LimitName) {
  return t.middleware(async ({ ctx, next }) => {
    const account = ctx.principal.account;
    if (!account)
      throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send a valid Bearer token." });
    await admittedBy(name)({ account, resHeaders: ctx.resHeaders });
    return next();
  });
}

/** The limit `name` as an admission check: throws the 429 (with Retry-After) once spent. */
export function admittedBy(name: LimitName) {
  return async ({ account, resHeaders }: { account: { id: string }; resHeaders: Headers }) => {
    const limit = await consume(LIMIT_RULES[name], account.id);
    if (limit.ok) return;
    resHeaders.set("Retry-After", String(limit.retryAfterSeconds));
    throw new TRPCError({
      code: "TOO_MANY_REQUESTS",
      message: `Too many requests: retry after ${limit.retryAfterSeconds} s.`,
      cause: new ErrorDetails({ reason: "rate_limited" }, limit.retryAfterSeconds),
    });
  };
}

const requireAdmin = t.middleware(async ({ ctx, path, next }) => {
  if (!ctx.principal.isAdmin) {
    await auditRefusedCall(ctx, path);
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Admin authentication required." });
  }
  // Who acts, for the audit log (decision 0063); a principal built without one is an operator's tool.
  return next({
    ctx: {
      adminActor: ctx.principal.admin?.actor ?? "admin",
      adminRole: ctx.principal.admin?.role ?? ("owner" as AdminRole),
    },
  });
});

/**
 * The role a procedure needs (decision 0200), checked on the server whatever the page shows; a
 * refusal is written to the audit log with the person's name.
 */
function requireRole(required: AdminRole) {
  return t.middleware(async ({ ctx, path, next }) => {
    const held = ctx.principal.admin?.role ?? "owner";
    if (!roleAllows(held, required)) {
      await recordRoleRefusal(ctx.prisma, {
        actor: ctx.principal.admin?.actor ?? "admin",
        address: clientAddress(ctx.reqHeaders),
        subject: path,
        required,
      });
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `This needs the ${required} role; yours is ${held}.`,
      });
    }
    return next();
  });
}

/**
 * The admin procedure is audited from its authorization on (decision 0148): a caller refused
 * here is written down, unless a wrong admin token already was (authenticate records those).
 */
async function auditRefusedCall(ctx: Context, path: string): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.reqHeaders.get("authorization") ?? "")?.[1];
  if (bearer && !looksLikeApiKey(bearer)) return;
  const account = ctx.principal.account;
  await recordAdminRefusal(ctx.prisma, {
    channel: "procedure",
    address: clientAddress(ctx.reqHeaders),
    outcome: "failed: UNAUTHORIZED",
    subject: path,
    ...(account ? { actor: `account ${account.handle}` } : {}),
  });
}

/** Any person of the console, a viewer included: reads. */
export const adminProcedure = t.procedure.meta({ admin: true }).use(requireAdmin);
/** Acts on money and keys: refunds, captures, cancels, re-drives, reconciliations. */
export const operatorProcedure = adminProcedure.use(requireRole("operator"));
/** Manages the operators themselves. */
export const ownerProcedure = adminProcedure.use(requireRole("owner"));

/** The key header is checked first, before authentication and input validation. */
const keyedProcedure = t.procedure.meta({ idempotent: true }).use(idempotency.keyHeader);

/**
 * A mutation that runs at most once per (account, Idempotency-Key), named by its owner's
 * constant (`options.procedure`). Its resolver is wrapped in `idempotency.replayable`, which
 * answers a replay, and gets `ctx.idempotency` for atomic phases and the fenced final transaction.
 */
export function idempotentProcedure<TSchema extends z.ZodType>(
  input: TSchema,
  options: ProcedureOptions<z.output<TSchema>>,
) {
  return keyedProcedure.use(requireAccount).input(input).use(idempotency.claim<z.output<TSchema>>(options));
}

/**
 * An operator's mutation that runs at most once per (operators' account, Idempotency-Key): the
 * key header is checked first, then the admin; `scope` names the account the operators' keys
 * belong to (decision 0110), for an operator authenticates as the admin, not as an account.
 */
export function adminIdempotentProcedure<TSchema extends z.ZodType>(
  input: TSchema,
  options: ProcedureOptions<z.output<TSchema>>,
  scope: (prisma: Context["prisma"]) => Promise<{ id: string }>,
) {
  return t.procedure
    .meta({ idempotent: true, admin: true })
    .use(idempotency.keyHeader)
    .use(requireAdmin)
    .use(requireRole("operator"))
    .use(async ({ ctx, next }) => next({ ctx: { account: await scope(ctx.prisma) } }))
    .input(input)
    .use(idempotency.claim<z.output<TSchema>>(options));
}
