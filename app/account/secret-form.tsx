"use client";

import { type ReactNode, useActionState } from "react";
import { CopyButton } from "./copy-button";
import type { SecretState } from "./webhook-actions";

/** A form whose answer may carry a signing secret: shown this once, never stored in the page. */
export function SecretForm({
  action,
  children,
  label,
}: {
  action: (prev: SecretState, formData: FormData) => Promise<SecretState>;
  children: ReactNode;
  label: string;
}) {
  const [state, formAction, pending] = useActionState<SecretState, FormData>(action, null);
  return (
    <form action={formAction} className="stack">
      {state && "message" in state && (
        <p role="alert" className="error">
          {state.message}
        </p>
      )}
      {state && "secret" in state && (
        <div role="status" className="card">
          <p>{state.note}. Copy it now: it will not be shown again.</p>
          <p className="secret-row">
            <output aria-label="Webhook signing secret">
              <code>{state.secret}</code>
            </output>
            <CopyButton text={state.secret} label="Copy the secret" />
          </p>
        </div>
      )}
      {children}
      <button type="submit" disabled={pending}>
        {label}
      </button>
    </form>
  );
}
