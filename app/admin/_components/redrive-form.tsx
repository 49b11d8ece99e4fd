"use client";

import { useActionState } from "react";
import { SubmitButton } from "./submit-button";

export type RedriveState = { message: string | null; error: boolean };

/** "Re-drive now" on an unfinished key: the completer's path, at once. */
export function RedriveForm({
  redrive,
}: {
  redrive: (previous: RedriveState, form: FormData) => Promise<RedriveState>;
}) {
  const [state, action] = useActionState(redrive, { message: null, error: false });
  return (
    <form action={action} className="inline-form">
      <SubmitButton pending="Re-driving…">Re-drive now</SubmitButton>
      {state.message && (
        <p role={state.error ? "alert" : "status"} className={state.error ? "error" : "muted"}>
          {state.message}
        </p>
      )}
    </form>
  );
}
