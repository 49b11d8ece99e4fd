"use client";

import { useActionState } from "react";
import { type CreateKeyState, createKeyAction } from "./actions";
import { CopyButton } from "./copy-button";

/** Creates a key and shows its secret this once: only its hash is kept. */
export function CreateKeyForm() {
  const [state, action, pending] = useActionState<CreateKeyState, FormData>(createKeyAction, null);
  return (
    <form action={action} className="stack">
      {state && "message" in state && (
        <p role="alert" className="error">
          {state.message}
        </p>
      )}
      {state && "secret" in state && (
        <div role="status" className="card">
          <p>
            New key <strong>{state.label}</strong>. Copy it now: it will not be shown again.
          </p>
          <p className="secret-row">
            <output aria-label="New API key">
              <code>{state.secret}</code>
            </output>
            <CopyButton text={state.secret} label="Copy the key" />
          </p>
        </div>
      )}
      <label htmlFor="label">Key name</label>
      <input id="label" name="label" required maxLength={64} placeholder="e.g. order sync" />
      <label htmlFor="scope">What the key may do</label>
      <select id="scope" name="scope" defaultValue="payments">
        <option value="payments">Orders and payments</option>
        <option value="read_only">Read only</option>
      </select>
      <label htmlFor="expiresInDays">Expires</label>
      <select id="expiresInDays" name="expiresInDays" defaultValue="0">
        <option value="0">Never (until revoked)</option>
        <option value="30">In 30 days</option>
        <option value="90">In 90 days</option>
        <option value="365">In a year</option>
      </select>
      <button type="submit" disabled={pending}>
        Create API key
      </button>
    </form>
  );
}
