"use client";

import { useActionState } from "react";
import { type InviteState, inviteOperator } from "../_operators/actions";
import { SubmitButton } from "./submit-button";

const IDLE: InviteState = { kind: "idle" };

/** An owner adds a person; the secret is shown here once, the outcome replacing the last one. */
export function InviteOperatorForm() {
  const [state, action] = useActionState(inviteOperator, IDLE);
  return (
    <form action={action} className="stack" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Add an operator</h2>
      <label htmlFor="op-name">Name</label>
      <input id="op-name" name="name" required maxLength={100} autoComplete="off" />
      <label htmlFor="op-email">Email</label>
      <input id="op-email" name="email" type="email" required maxLength={254} autoComplete="off" />
      <label htmlFor="op-role">Role</label>
      <select id="op-role" name="role" defaultValue="viewer">
        <option value="viewer">Viewer: reads only</option>
        <option value="operator">Operator: refunds, captures, cancels, re-drives, reconciles</option>
        <option value="owner">Owner: all that, and manages operators</option>
      </select>
      <SubmitButton pending="Adding…">Add operator</SubmitButton>
      <div aria-live="polite">
        {state.kind === "invited" && (
          <div className="notice" data-testid="invited">
            <p>
              {state.name} ({state.email}) is a{state.role === "operator" ? "n" : ""} {state.role}. Give them
              this secret; it is shown only now:
            </p>
            <p>
              <code className="mono" data-testid="operator-secret">
                {state.secret}
              </code>
            </p>
          </div>
        )}
        {state.kind === "refused" && (
          <p role="alert" className="error">
            {state.message}
          </p>
        )}
      </div>
    </form>
  );
}
