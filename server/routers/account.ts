import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { API_KEY_SCOPES } from "../auth/api-key-format";
import { createApiKey, listApiKeys, MAX_KEYS_PER_ACCOUNT, revokeApiKey } from "../auth/api-keys";
import { env } from "../env";
import { authedProcedure, router, sessionProcedure } from "../trpc";

const ZApiKey = z.object({
  id: z.string(),
  label: z.string(),
  scope: z.enum(API_KEY_SCOPES),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

export const ZCreateApiKey = z.object({
  label: z.string().trim().min(1).max(64),
  scope: z.enum(API_KEY_SCOPES).default("payments"),
  /** Unset: the key lasts until revoked. */
  expiresInDays: z.number().int().min(1).max(366).optional(),
});

export const accountRouter = router({
  me: authedProcedure
    .output(z.object({ id: z.string(), handle: z.string(), name: z.string() }))
    .query(({ ctx }) => ctx.account),
  // Keys are managed from a signed-in session only: no key can list, mint or revoke keys.
  apiKeys: router({
    list: sessionProcedure
      .output(z.array(ZApiKey))
      .query(({ ctx }) => listApiKeys(ctx.prisma, ctx.account.id)),
    /** The plaintext key is in this answer only; the database keeps its hash. */
    create: sessionProcedure
      .input(ZCreateApiKey)
      .output(z.object({ key: ZApiKey, secret: z.string() }))
      .mutation(async ({ ctx, input }) => {
        const made = await createApiKey(ctx.prisma, ctx.account.id, {
          ...input,
          production: env.isProduction,
        });
        if ("limitReached" in made)
          throw new TRPCError({
            code: "BAD_REQUEST",
            message: `An account can have at most ${MAX_KEYS_PER_ACCOUNT} API keys: revoke one first.`,
          });
        return made;
      }),
    revoke: sessionProcedure
      .input(z.object({ id: z.uuid() }))
      .output(z.object({ revoked: z.literal(true) }))
      .mutation(async ({ ctx, input }) => {
        if (!(await revokeApiKey(ctx.prisma, ctx.account.id, input.id)))
          throw new TRPCError({ code: "NOT_FOUND", message: "API key not found." });
        return { revoked: true as const };
      }),
  }),
});
