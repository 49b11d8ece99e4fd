import { z } from "zod";
import { authedProcedure, router } from "../trpc";
import {
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  deleteEndpoint,
  listEndpoints,
  recentDeliveries,
  registerEndpoint,
  replayFailedMessages,
  replayMessage,
  rotateSecret,
  sendTestEvent,
  setEndpointEnabled,
  WEBHOOK_EVENT_TYPES,
  ZWebhookDelivery,
  ZWebhookEndpoint,
} from "../webhooks";

export const ZCreateWebhookEndpoint = z.object({
  url: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .meta({ examples: ["https://shop.example/webhooks"] }),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length),
});

const ZWebhookSecret = z.string().meta({
  description:
    "`whsec_` and base64: verify deliveries with it (Standard Webhooks). Shown in this answer only.",
});

const ZEndpointRef = z.object({ id: z.uuid() });
const NOT_FOUND = "No such webhook endpoint.";
const errors = (more: Record<number, string> = {}) => ({
  401: "No valid Bearer API key.",
  403: "The API key is read-only.",
  ...more,
});

/** Merchant webhooks: thin over server/webhooks, for a signed-in customer or a payments-scope key. */
export const webhooksRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook_endpoints",
        tags: ["webhooks"],
        summary: "Register a webhook endpoint; its signing secret is in this answer only",
        errorResponses: errors({
          400: "Invalid URL or events, a URL that is not https or resolves to a private, loopback or metadata address, or too many endpoints.",
        }),
      },
    })
    .input(ZCreateWebhookEndpoint)
    .output(ZWebhookEndpoint.extend({ secret: ZWebhookSecret }))
    .mutation(({ ctx, input }) => registerEndpoint(ctx.prisma, ctx.account.id, input)),
  list: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook_endpoints",
        tags: ["webhooks"],
        summary: "Your webhook endpoints",
        errorResponses: { 401: "No valid Bearer API key." },
      },
    })
    .input(z.object({}).optional())
    .output(z.array(ZWebhookEndpoint))
    .query(({ ctx }) => listEndpoints(ctx.prisma, ctx.account.id)),
  delete: authedProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/webhook_endpoints/{id}",
        tags: ["webhooks"],
        summary: "Delete a webhook endpoint: nothing is sent to it afterwards",
        errorResponses: errors({ 400: "The id is not a UUID.", 404: NOT_FOUND }),
      },
    })
    .input(ZEndpointRef)
    .output(z.object({ deleted: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await deleteEndpoint(ctx.prisma, ctx.account.id, input.id);
      return { deleted: true as const };
    }),
  rotateSecret: authedProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook_endpoints/{id}/rotate_secret",
        tags: ["webhooks"],
        summary: "A new signing secret (in this answer only); the old one keeps signing for the overlap",
        errorResponses: errors({ 400: "Invalid id or overlap.", 404: NOT_FOUND }),
      },
    })
    .input(
      ZEndpointRef.extend({
        overlapSeconds: z
          .number()
          .int()
          .min(0)
          .max(7 * 86_400)
          .default(DEFAULT_ROTATION_OVERLAP_SECONDS),
      }),
    )
    .output(z.object({ secret: ZWebhookSecret, previousExpiresAt: z.string() }))
    .mutation(({ ctx, input }) => rotateSecret(ctx.prisma, ctx.account.id, input.id, input.overlapSeconds)),
  replayFailed: authedProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook_endpoints/{id}/replay",
        tags: ["webhooks"],
        summary: "Send again every failed message of the endpoint created in [since, until)",
        errorResponses: errors({ 400: "Invalid id or range.", 404: NOT_FOUND }),
      },
    })
    .input(
      ZEndpointRef.extend({
        since: z.iso.datetime({ offset: true }),
        until: z.iso.datetime({ offset: true }),
      }),
    )
    .output(z.object({ replayed: z.number().int() }))
    .mutation(async ({ ctx, input }) => ({
      replayed: await replayFailedMessages(ctx.prisma, ctx.account.id, input.id, {
        since: new Date(input.since),
        until: new Date(input.until),
      }),
    })),
  replayMessage: authedProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook_messages/{id}/replay",
        tags: ["webhooks"],
        summary: "Send one message again, with the same webhook-id and body",
        errorResponses: errors({ 400: "Invalid id.", 404: "No such webhook message." }),
      },
    })
    .input(z.object({ id: z.string().regex(/^msg_[0-9a-f]{32}$/, "must be a message id (msg_…)") }))
    .output(z.object({ replayed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await replayMessage(ctx.prisma, ctx.account.id, input.id);
      return { replayed: true as const };
    }),
  sendTest: authedProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook_endpoints/{id}/test",
        tags: ["webhooks"],
        summary: "Send a webhook.test event to the endpoint",
        errorResponses: errors({ 400: "Invalid id.", 404: NOT_FOUND }),
      },
    })
    .input(ZEndpointRef)
    .output(z.object({ messageId: z.string() }))
    .mutation(({ ctx, input }) => sendTestEvent(ctx.prisma, ctx.account.id, input.id)),
  deliveries: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook_endpoints/{id}/deliveries",
        tags: ["webhooks"],
        summary: "The endpoint's latest messages, each with its last attempt",
        errorResponses: { 400: "Invalid id.", 401: "No valid Bearer API key.", 404: NOT_FOUND },
      },
    })
    .input(ZEndpointRef)
    .output(z.array(ZWebhookDelivery))
    .query(({ ctx, input }) => recentDeliveries(ctx.prisma, ctx.account.id, input.id)),
  setEnabled: authedProcedure
    .input(ZEndpointRef.extend({ enabled: z.boolean() }))
    .output(ZWebhookEndpoint)
    .mutation(({ ctx, input }) => setEndpointEnabled(ctx.prisma, ctx.account.id, input.id, input.enabled)),
});
