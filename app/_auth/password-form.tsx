"use client";

import { useActionState } from "react";
import type { FormState } from "./actions";

/** Email and password, with the server's answer (wrong password, throttled) shown in place. */
export function PasswordForm(props: {
  action: (prev: FormState | null, formData: FormData) => Promise<FormState>;
  submitLabel: string;
  newPassword?: boolean;
}) {
  const [state, action, pending] = useActionState(props.action, null);
  return (
    <form action={action} className="stack">
      {state?.message && (
        <p role="alert" className="error">
          {state.message}
        </p>
      )}
      <label htmlFor="email">Email</label>
      <input id="email" name="email" type="email" autoComplete="email" required maxLength={254} />
      <label htmlFor="password">Password</label>
      <input
        id="password"
        name="password"
        type="password"
        autoComplete={props.newPassword ? "new-password" : "current-password"}
        required
        minLength={props.newPassword ? 10 : undefined}
        maxLength={128}
      />
      <button type="submit" disabled={pending}>
        {props.submitLabel}
      </button>
    </form>
  );
}
