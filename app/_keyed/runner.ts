import {
  browserIntentFactory,
  type IntentFactory,
  type IntentRequest,
  type IntentStorage,
  type IntentStore,
  type KeyedIntent,
} from "./intent-store";
import type { Progress } from "./retry";

export type RunState<I, O> =
  | { phase: "idle" }
  /** `resumed`: the intent was found saved (after a reload), not started by a press here. */
  | { phase: "running"; intent: I; progress: Progress; resumed: boolean }
  | { phase: "done"; intent: I; outcome: O };

export const IDLE = { phase: "idle" } as const;

export interface RunnerDeps<I extends KeyedIntent, O> {
  store: IntentStore<I>;
  /** Read lazily: there is no localStorage while the server renders. */
  storage(): IntentStorage;
  intents?: IntentFactory;
  /** The retry loop of one intent, reporting its progress. */
  run(intent: I, onProgress: (progress: Progress) => void): Promise<O>;
  /** The stored outcome an outcome settles the intent with; undefined leaves it to be resumed. */
  settledBy(outcome: O): NonNullable<I["settled"]> | undefined;
  /** The outcome of a bug in the loop: the operation may have happened, so the intent is kept. */
  failed: O;
}

export type Runner<I extends KeyedIntent, O> = ReturnType<typeof createRunner<I, O>>;

/**
 * Runs intents, at most one per scope at a time, and publishes their progress as a store React
 * can subscribe to. A press while the scope's intent is in flight (a double click, a button whose
 * disabled state was removed) joins that intent instead of making a key.
 */
export function createRunner<I extends KeyedIntent, O>(deps: RunnerDeps<I, O>) {
  const states = new Map<string, RunState<I, O>>();
  const running = new Map<string, Promise<O>>();
  const listeners = new Set<() => void>();

  function publish(scope: string, state: RunState<I, O>) {
    states.set(scope, state);
    for (const listener of listeners) listener();
  }

  function run(intent: I, resumed: boolean): Promise<O> {
    const scope = deps.store.scopeOf(intent);
    const outcome = (async (): Promise<O> => {
      let result: O;
      try {
        result = await deps.run(intent, (progress) =>
          publish(scope, { phase: "running", intent, progress, resumed }),
        );
      } catch (error) {
        console.error("intent loop failed", error);
        result = deps.failed;
      }
      running.delete(scope);
      const settled = deps.settledBy(result);
      if (settled) deps.store.settle(deps.storage(), intent, settled);
      publish(scope, { phase: "done", intent, outcome: result });
      return result;
    })();
    running.set(scope, outcome);
    return outcome;
  }

  return {
    getState(scope: string): RunState<I, O> {
      return states.get(scope) ?? IDLE;
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** A press: a new intent with a new key, unless this scope's intent is in flight. */
    start(scope: string, request: IntentRequest<I>): Promise<O> {
      const inFlight = running.get(scope);
      if (inFlight) return inFlight;
      return run(deps.store.start(deps.storage(), request, deps.intents ?? browserIntentFactory), false);
    },
    /** Goes on with the scope's unfinished intent, same key; null when there is none. */
    resume(scope: string): Promise<O> | null {
      const inFlight = running.get(scope);
      if (inFlight) return inFlight;
      const intent = deps.store.read(deps.storage(), scope);
      if (!intent || intent.settled) return null;
      return run(intent, true);
    },
  };
}
