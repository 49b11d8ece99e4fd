"use client";

import type { IdempotentContext } from "@/app/_trpc/client";
import { browserRunnerDeps, useRunnerOf, useRunState } from "../../_keyed/use-runner";
import { createSettler, IDLE, type Settler, type SettleState } from "./settle";

const settlers = new WeakMap<object, Settler>();

export function useSettler(): Settler {
  return useRunnerOf(settlers, (client) =>
    createSettler({
      ...browserRunnerDeps,
      send: (input, idempotencyKey, signal) => {
        const options = { context: { idempotencyKey } satisfies IdempotentContext, signal };
        return input.action === "capture"
          ? client.admin.payments.capture.mutate(
              { id: input.paymentId, amountMinor: input.amountMinor },
              options,
            )
          : client.admin.payments.cancel.mutate({ id: input.paymentId }, options);
      },
    }),
  );
}

export function useSettleState(settler: Settler, paymentId: string): SettleState {
  return useRunState(settler, paymentId, IDLE);
}
