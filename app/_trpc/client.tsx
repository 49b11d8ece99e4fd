"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import type { AppRouter } from "@/server/root";
import { MAX_BATCH_CALLS } from "@/shared/batch-limit";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** The operation context a mutation passes to send its Idempotency-Key as a header. */
export interface IdempotentContext {
  idempotencyKey?: string;
}

/**
 * Queries are batched; mutations go one per request, unbatched, so each carries its own
 * Idempotency-Key header, taken from the operation's context (never from the input).
 */
export function makeTrpcClient() {
  const url = "/api/trpc";
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "mutation",
        true: httpLink({
          url,
          headers: ({ op }) => {
            const key = (op.context as IdempotentContext).idempotencyKey;
            return key ? { "Idempotency-Key": key } : {};
          },
        }),
        false: httpBatchLink({ url, maxItems: MAX_BATCH_CALLS }),
      }),
    ],
  });
}

export function TrpcProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 5_000, retry: 1 }, mutations: { retry: false } },
      }),
  );
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
