"use client";

import { useSyncExternalStore } from "react";
import { type IdempotentContext, useTRPCClient } from "@/app/_trpc/client";
import { sleepUnlessBackOnline } from "../_keyed/sleep";
import { createPayer, IDLE, type Payer, type PayState } from "./payer";

// One payer per tRPC client, outliving the checkout component: leaving the page and coming back
// (or React remounting it) joins the intent in flight instead of starting another.
const payers = new WeakMap<object, Payer>();

export function usePayer(): Payer {
  const client = useTRPCClient();
  let payer = payers.get(client);
  if (!payer) {
    payer = createPayer({
      send: (input, idempotencyKey, signal) =>
        client.payments.create.mutate(input, {
          context: { idempotencyKey } satisfies IdempotentContext,
          signal,
        }),
      storage: () => window.localStorage,
      sleep: sleepUnlessBackOnline,
      now: Date.now,
      random: Math.random,
    });
    payers.set(client, payer);
  }
  return payer;
}

export function usePayState(payer: Payer, orderId: string): PayState {
  return useSyncExternalStore(
    payer.subscribe,
    () => payer.getState(orderId),
    () => IDLE,
  );
}
