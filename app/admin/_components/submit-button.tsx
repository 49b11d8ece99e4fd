"use client";

import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";

/** A form's submit button that says it is working and cannot be pressed twice meanwhile. */
export function SubmitButton({
  children,
  pending,
  className,
}: {
  children: ReactNode;
  pending: ReactNode;
  className?: string;
}) {
  const status = useFormStatus();
  return (
    <button type="submit" disabled={status.pending} aria-busy={status.pending} className={className}>
      {status.pending ? pending : children}
    </button>
  );
}
