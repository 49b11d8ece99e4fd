import { z } from "zod";

/** The OpenAPI headers of an idempotent operation: the key it requires, the replay marker it answers. */
export function idempotentHeaders(keyDescription: string, example: string) {
  return {
    requestHeaders: z.object({
      "Idempotency-Key": z
        .string()
        .min(1)
        .max(255)
        .meta({ description: keyDescription, examples: [example] }),
    }),
    responseHeaders: z.object({
      "Idempotent-Replayed": z
        .literal("true")
        .optional()
        .meta({ description: "Present on a replay of the stored first response." }),
    }),
  };
}
