"use client";

import { useActionState } from "react";
import { SubmitButton } from "./submit-button";

export type RunState = { error: string | null };

/** The "run it now" button; the report itself is rendered by the page, refreshed by the action. */
export function ReconcileForm({ run }: { run: (previous: RunState, form: FormData) => Promise<RunState> }) {
  const [state, action] = useActionState(run, { error: null });
  return (
    <form action={action} className="inline-form">
      <SubmitButton pending="Reconciling…">Run reconciliation now</SubmitButton>
      {state.error && (
        <p role="alert" className="error">
          {state.error}
        </p>
      )}
    </form>
  );
}
