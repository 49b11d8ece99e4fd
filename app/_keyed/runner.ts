import type { IntentStore, StoredIntent } from "./intents";
import type { Progress } from "./send";

export type RunState<R, O> =
  | { phase: "idle" }
  /** `resumed`: the intent was found saved (after a reload), not started by a press here. */
  | { phase: "running"; intent: StoredIntent<R>; progress: Progress; resumed: boolean }
  | { phase: "done"; intent: StoredIntent<R>; outcome: O };

export const IDLE = { phase: "idle" } as const;

export interface IntentFactory {
  newKey(): string;
  now(): Date;
}

export const browserIntentFactory: IntentFactory = {
  newKey: () => crypto.randomUUID(),
  now: () => new Date(),
};

export interface RunnerDeps<R, O> {
  /** The operation's intents, one per scope (the intent id is the scope). */
  store: IntentStore<R>;
  scopeOf(request: R): string;
  intents?: IntentFactory | undefined;
  /** The retry loop of one intent, reporting its progress. */
  run(intent: StoredIntent<R>, onProgress: (progress: Progress) => void): Promise<O>;
  /** The status a final outcome is kept with on its intent; undefined leaves the intent to be resumed. */
  answerStatus(outcome: O): number | undefined;
  /** The outcome of a bug in the loop: the operation may have happened, so the intent is kept. */
  failed: O;
}

export type Runner<R, O> = ReturnType<typeof createRunner<R, O>>;

/**
 * Runs intents, at most one per scope at a time, and publishes their progress as a store React
 * can subscribe to. A press while the scope's intent is in flight (a double click, a button whose
 * disabled state was removed) joins that intent instead of making a key.
 */
export function createRunner<R, O>(deps: RunnerDeps<R, O>) {
  const states = new Map<string, RunState<R, O>>();
  const running = new Map<string, Promise<O | null>>();
  const listeners = new Set<() => void>();

  function publish(scope: string, state: RunState<R, O>) {
    states.set(scope, state);
    for (const listener of listeners) listener();
  }

  /** Registers the scope's run before anything is awaited, so a second press joins it. */
  function runOnce(scope: string, find: () => Promise<{ intent: StoredIntent<R>; resumed: boolean } | null>) {
    const inFlight = running.get(scope);
    if (inFlight) return inFlight;
    const outcome = (async (): Promise<O | null> => {
      let found: Awaited<ReturnType<typeof find>>;
      try {
        found = await find();
      } catch (error) {
        running.delete(scope);
        throw error;
      }
      if (!found) {
        running.delete(scope);
        return null;
      }
      const { intent, resumed } = found;
      let result: O;
      try {
        result = await deps.run(intent, (progress) =>
          publish(scope, { phase: "running", intent, progress, resumed }),
        );
      } catch (error) {
        console.error("intent loop failed", error);
        result = deps.failed;
      }
      const status = deps.answerStatus(result);
      // Kept with the intent before the page shows it (decision 0141).
      if (status !== undefined)
        await deps.store.settle?.(intent, { status, body: result, answeredAt: new Date().toISOString() });
      running.delete(scope);
      publish(scope, { phase: "done", intent, outcome: result });
      return result;
    })();
    running.set(scope, outcome);
    return outcome;
  }

  return {
    getState(scope: string): RunState<R, O> {
      return states.get(scope) ?? IDLE;
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** A press: a new intent with a new key (saved before it is sent), unless this scope's intent is in flight. */
    start(request: R): Promise<O> {
      const scope = deps.scopeOf(request);
      const factory = deps.intents ?? browserIntentFactory;
      return runOnce(scope, async () => {
        const intent = {
          intentId: scope,
          key: factory.newKey(),
          request,
          createdAt: factory.now().toISOString(),
        };
        // The browser's store lets a refused write go (the intent lives on in this page); only a
        // reload could not resume it then.
        await deps.store.delete(scope);
        // Another tab's press in between: the later press (this one) replaces it, as a press does.
        if ((await deps.store.create(intent)).key !== intent.key) {
          await deps.store.delete(scope);
          await deps.store.create(intent);
        }
        return { intent, resumed: false };
      }) as Promise<O>;
    },
    /** Goes on with the scope's unfinished intent, same key; null when there is none. */
    resume(scope: string): Promise<O | null> {
      return runOnce(scope, async () => {
        const intent = (await deps.store.list()).find((i) => i.intentId === scope);
        return intent && !intent.answer ? { intent, resumed: true } : null;
      });
    },
  };
}
