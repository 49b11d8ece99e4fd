"use client";

import { useSyncExternalStore } from "react";
import { useTRPCClient } from "@/app/_trpc/client";
import { sleepUnlessBackOnline } from "./sleep";

type TrpcClient = ReturnType<typeof useTRPCClient>;

/** What every intent runner in the browser is given besides its `send`. */
export const browserRunnerDeps = {
  storage: () => window.localStorage,
  sleep: sleepUnlessBackOnline,
  now: Date.now,
  random: Math.random,
};

/**
 * One runner per tRPC client, outliving the component that asks for it: leaving the page and
 * coming back (or React remounting it) joins the intent in flight instead of starting another.
 */
export function useRunnerOf<R>(runners: WeakMap<object, R>, make: (client: TrpcClient) => R): R {
  const client = useTRPCClient();
  let runner = runners.get(client);
  if (!runner) {
    runner = make(client);
    runners.set(client, runner);
  }
  return runner;
}

/** A scope's run state, as a React store. */
export function useRunState<S>(
  runner: { subscribe(listener: () => void): () => void; getState(scope: string): S },
  scope: string,
  idle: S,
): S {
  return useSyncExternalStore(
    runner.subscribe,
    () => runner.getState(scope),
    () => idle,
  );
}
