"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { formatMoney } from "@/app/money";
import type { TAuthorization } from "@/server/admin/authorizations";
import type { SettleOutcome, TSettleInput } from "../_authorizations/settle";
import { AuthorizationActions } from "./authorization-actions";
import { utc } from "./format";

const SOON_MS = 24 * 3600 * 1000;

/**
 * Authorized payments, the soonest deadline first. The last action's outcome is shown once, above
 * the list: a captured or canceled payment leaves the list, and a newer outcome replaces it.
 */
export function AuthorizationList({ items, now }: { items: TAuthorization[]; now: number }) {
  const router = useRouter();
  const [last, setLast] = useState<{ input: TSettleInput; outcome: SettleOutcome } | null>(null);
  return (
    <>
      <div role="status" aria-live="polite" data-testid="settle-outcome">
        {last && <OutcomeLine input={last.input} outcome={last.outcome} />}
      </div>
      {items.length === 0 ? (
        <p className="muted">No payment is waiting for capture.</p>
      ) : (
        <ul className="stack authorizations">
          {items.map((a) => {
            const soon = a.captureBefore !== null && Date.parse(a.captureBefore) - now < SOON_MS;
            return (
              <li key={a.id} className="card" data-testid="authorization" aria-labelledby={`auth-${a.id}`}>
                <h2 id={`auth-${a.id}`} className="mono small">
                  {formatMoney(a.amountMinor, a.currency)} · payment {a.id}
                </h2>
                <p>
                  Order <a href={`/admin/orders/${a.orderId}`}>{a.orderId}</a> · {a.accountHandle}
                </p>
                <p>
                  Capture before{" "}
                  <time dateTime={a.captureBefore ?? undefined} data-testid="deadline">
                    {a.captureBefore ? utc(a.captureBefore) : "—"}
                  </time>{" "}
                  {soon && (
                    <span className="badge badge-needs_attention" data-testid="expiring-soon">
                      Expires within 24 h
                    </span>
                  )}
                </p>
                <AuthorizationActions
                  authorization={a}
                  onOutcome={(input, outcome) => {
                    setLast({ input, outcome });
                    router.refresh();
                  }}
                />
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}

function OutcomeLine({ input, outcome }: { input: TSettleInput; outcome: SettleOutcome }) {
  const what = `payment ${input.paymentId}`;
  if (outcome.kind === "succeeded") {
    const p = outcome.payment;
    const text =
      p.status === "canceled"
        ? `Canceled ${what}: the hold of ${formatMoney(p.amount, p.currency)} was released.`
        : `Captured ${formatMoney(p.amountCaptured, p.currency)} of ${what}` +
          (p.amount > p.amountCaptured
            ? `; ${formatMoney(p.amount - p.amountCaptured, p.currency)} released.`
            : ".");
    return (
      <p className="success" data-testid="settle-result">
        {text}
      </p>
    );
  }
  if (outcome.kind === "refused") {
    return (
      <p className="error" data-testid="settle-refused">
        Not done for {what}: {outcome.message}
        {outcome.state ? ` (${outcome.state})` : ""}
      </p>
    );
  }
  return <p className="error">{outcome.message}</p>;
}
