"use client";

import { useRef, useState } from "react";
import { revokeKeyAction } from "./actions";

/** Revoke asks once more, in place: a revoked key stops working at once and cannot come back. */
export function RevokeKeyButton({ id, label }: { id: string; label: string }) {
  const [asking, setAsking] = useState(false);
  const revokeRef = useRef<HTMLButtonElement>(null);
  if (!asking) {
    return (
      <button
        type="button"
        className="secondary small-button"
        aria-label={`Revoke ${label}`}
        onClick={() => {
          setAsking(true);
          requestAnimationFrame(() => revokeRef.current?.focus());
        }}
      >
        Revoke
      </button>
    );
  }
  return (
    <form action={revokeKeyAction} className="confirm" aria-label={`Confirm revoking ${label}`}>
      <input type="hidden" name="id" value={id} />
      <span className="small">
        Revoke <strong>{label}</strong>? Anything using it stops working at once.
      </span>
      <span className="confirm-actions">
        <button ref={revokeRef} type="submit" className="danger small-button">
          Revoke key
        </button>
        <button type="button" className="secondary small-button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </span>
    </form>
  );
}
