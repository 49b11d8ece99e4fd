"use client";

import { useState } from "react";

/** Copies a one-time secret to the clipboard and says so, in words a screen reader announces. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  return (
    <span className="copy">
      <button
        type="button"
        className="secondary small-button"
        aria-label={label}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied("yes"),
            () => setCopied("failed"),
          )
        }
      >
        Copy
      </button>
      <span role="status" className="small muted">
        {copied === "yes"
          ? "Copied"
          : copied === "failed"
            ? "Could not copy: select the key and copy it"
            : ""}
      </span>
    </span>
  );
}
