"use client";

import type { IdempotentContext } from "@/app/_trpc/client";
import { browserRunnerDeps, useRunnerOf, useRunState } from "../_keyed/use-runner";
import { createPayer, IDLE, type Payer, type PayState } from "./payer";

const payers = new WeakMap<object, Payer>();

export function usePayer(): Payer {
  return useRunnerOf(payers, (client) =>
    createPayer({
      ...browserRunnerDeps,
      send: (input, idempotencyKey, signal) =>
        client.payments.create.mutate(input, {
          context: { idempotencyKey } satisfies IdempotentContext,
          signal,
        }),
    }),
  );
}

export function usePayState(payer: Payer, orderId: string): PayState {
  return useRunState(payer, orderId, IDLE);
}
