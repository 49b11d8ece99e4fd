"use client";

import { useEffect } from "react";

/** How long the live region's words stay before the browser leaves for the bank's page. */
const ANNOUNCE_MS = 700;

/**
 * The bank's 3-D Secure step. After a press of Pay here the browser goes to the bank's page by
 * itself; found again (a reload, a second tab, a return without finishing) it waits for the
 * shopper to follow the link. Either way the saved intent and its key are what resumes it.
 */
export function BankStep({
  ref,
  url,
  go,
  paymentId,
}: {
  ref?: React.Ref<HTMLDivElement>;
  url: string;
  go: boolean;
  paymentId: string;
}) {
  useEffect(() => {
    if (!go) return;
    const timer = setTimeout(() => window.location.assign(url), ANNOUNCE_MS);
    return () => clearTimeout(timer);
  }, [go, url]);
  return (
    <div ref={ref} tabIndex={-1} className="notice notice-info" data-testid="bank-step">
      <h3>Your bank asks you to confirm this payment</h3>
      <p>
        {go
          ? "Taking you to your bank's page. You come back here when it is done; nothing is charged twice."
          : "It waits for you on your bank's page: finish there and you come back here. Nothing is charged until your bank confirms, and only once."}{" "}
        Payment <code data-testid="existing-payment-id">{paymentId}</code>.
      </p>
      <p>
        <a className="button" href={url}>
          Continue to your bank
        </a>
      </p>
    </div>
  );
}

/** The live region's words for the step (read by screen readers as the page changes). */
export function bankStepAnnouncement(go: boolean): string {
  return go
    ? "Your bank asks you to confirm this payment. Taking you to your bank…"
    : "Your bank asks you to confirm this payment.";
}
