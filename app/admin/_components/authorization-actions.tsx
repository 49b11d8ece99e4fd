"use client";

import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { formatMoney, minorToInput, parseMoney } from "@/app/money";
import type { TAuthorization } from "@/server/admin/authorizations";
import type { SettleOutcome, TSettleInput } from "../_authorizations/settle";
import { useSettler, useSettleState } from "../_authorizations/use-settler";

/**
 * Capture (all or part) or Cancel one authorization. The key is born at the press and saved with
 * the intent in this browser; on load, an unfinished one for this payment resumes with its key.
 */
export function AuthorizationActions({
  authorization: a,
  onOutcome,
}: {
  authorization: TAuthorization;
  onOutcome(input: TSettleInput, outcome: SettleOutcome): void;
}) {
  const settler = useSettler();
  const state = useSettleState(settler, a.id);
  const id = useId();
  const [amount, setAmount] = useState(minorToInput(a.amountMinor, a.currency));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  // Resumed once per payment; the latest onOutcome (a new function every render) is told.
  const tell = useRef(onOutcome);
  tell.current = onOutcome;
  useEffect(() => {
    void settler.resume(a.id).then((outcome) => {
      const found = settler.getState(a.id);
      if (outcome && found.phase === "done") tell.current(found.intent.request, outcome);
    });
  }, [settler, a.id]);

  const running = state.phase === "running";

  function send(input: TSettleInput) {
    setInvalid(null);
    void settler.settle(input).then((outcome) => onOutcome(input, outcome));
  }

  function capture(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const amountMinor = parseMoney(amount, a.currency);
    if (amountMinor === null || amountMinor <= 0 || amountMinor > a.amountMinor) {
      setInvalid(
        `Enter an amount between ${formatMoney(1, a.currency)} and ${formatMoney(a.amountMinor, a.currency)}.`,
      );
      return;
    }
    send({ action: "capture", paymentId: a.id, amountMinor });
  }

  const doing = running ? state.intent.request.action : null;
  return (
    <form onSubmit={capture} className="stack" aria-label={`Capture or cancel payment ${a.id}`}>
      <fieldset className="filters" disabled={!hydrated}>
        <div>
          <label htmlFor={`${id}-amount`}>Amount to capture ({a.currency})</label>
          <input
            id={`${id}-amount`}
            name="amount"
            inputMode="decimal"
            autoComplete="off"
            value={amount}
            aria-describedby={`${id}-max`}
            onChange={(e) => setAmount(e.target.value)}
          />
          <span id={`${id}-max`} className="muted small">
            At most {formatMoney(a.amountMinor, a.currency)}; the rest is released.
          </span>
        </div>
        <div className="filter-actions">
          <button type="submit" disabled={running} aria-busy={doing === "capture"}>
            {doing === "capture" ? "Capturing…" : "Capture"}
          </button>
          <button
            type="button"
            disabled={running}
            aria-busy={doing === "cancel"}
            onClick={() => send({ action: "cancel", paymentId: a.id })}
          >
            {doing === "cancel" ? "Canceling…" : "Cancel"}
          </button>
        </div>
      </fieldset>
      {invalid && (
        <p role="alert" className="error">
          {invalid}
        </p>
      )}
      {running && (
        <p role="status" className="muted">
          {doing === "capture" ? "Capturing" : "Canceling"} with the same key until it is confirmed…
        </p>
      )}
    </form>
  );
}
