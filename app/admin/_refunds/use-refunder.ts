"use client";

import type { IdempotentContext } from "@/app/_trpc/client";
import { browserRunnerDeps, useRunnerOf, useRunState } from "../../_keyed/use-runner";
import { createRefunder, IDLE, type Refunder, type RefundState } from "./refund";

const refunders = new WeakMap<object, Refunder>();

export function useRefunder(): Refunder {
  return useRunnerOf(refunders, (client) =>
    createRefunder({
      ...browserRunnerDeps,
      send: (input, idempotencyKey, signal) =>
        client.admin.refunds.create.mutate(input, {
          context: { idempotencyKey } satisfies IdempotentContext,
          signal,
        }),
    }),
  );
}

export function useRefundState(refunder: Refunder, paymentId: string): RefundState {
  return useRunState(refunder, paymentId, IDLE);
}
