"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";
import { formatMoney, minorToInput, parseMoney } from "@/app/money";
import { amountProblem } from "@/shared/currency";
import {
  type RefundOutcome,
  type RefundState,
  type TRefundInput,
  unfinishedRequest,
} from "../_refunds/refund";
import { useRefunder, useRefundState } from "../_refunds/use-refunder";

/**
 * Refund part or all of one succeeded payment. Refund shows what will happen; Confirm makes the
 * intent, whose key is born then and saved in this browser (app/admin/_refunds/refund.ts). On load,
 * and at the next Confirm, an unfinished refund of this payment goes on with its key. The page's figures are re-read after every outcome.
 */
export function RefundForm({
  paymentId,
  currency,
  refundableMinor,
}: {
  paymentId: string;
  currency: string;
  refundableMinor: number;
}) {
  const refunder = useRefunder();
  const state = useRefundState(refunder, paymentId);
  const router = useRouter();
  const id = useId();
  const [amount, setAmount] = useState(minorToInput(refundableMinor, currency));
  const [reason, setReason] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);

  // Typed before hydration, a value would never reach the state the refund is sent from: the
  // fields take input only once React owns them.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  // The default is what is left: after a refund (here or elsewhere) the page brings a new rest.
  // Only a new rest replaces the amount, never the mount: an operator's typing is kept.
  const shownRest = useRef(refundableMinor);
  useEffect(() => {
    if (shownRest.current === refundableMinor) return;
    shownRest.current = refundableMinor;
    setAmount(minorToInput(refundableMinor, currency));
  }, [refundableMinor, currency]);

  useEffect(() => {
    void refunder.resume(paymentId).then((outcome) => {
      if (outcome) router.refresh();
    });
  }, [refunder, paymentId, router]);

  const running = state.phase === "running";
  // Refund asks first; the request (and its key) is made only by Confirm.
  const [asked, setAsked] = useState<TRefundInput | null>(null);
  const unfinished = unfinishedRequest(state);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // A refund left without a final answer is what a confirmation goes on with (same key).
    if (unfinished) {
      setInvalid(null);
      setAsked(unfinished);
      return;
    }
    const amountMinor = parseMoney(amount, currency);
    if (amountMinor === null || amountMinor <= 0) {
      setInvalid(
        `Enter an amount in ${currency} greater than zero, like ${minorToInput(refundableMinor, currency)}.`,
      );
      return;
    }
    // The server checks the same (a refund must be valid in its currency); this saves the round trip.
    const problem = amountProblem(amountMinor, currency, "refund");
    if (problem) {
      setInvalid(problem.message);
      return;
    }
    // Capped at what the page last read as left; the server's own cap decides between tabs.
    if (amountMinor > refundableMinor) {
      setInvalid(`At most ${formatMoney(refundableMinor, currency)} is left to refund on this payment.`);
      return;
    }
    if (reason.trim() === "") {
      setInvalid("Say why the money goes back (a short reason).");
      return;
    }
    setInvalid(null);
    setAsked({ paymentId, amountMinor, reason: reason.trim() });
  }

  function confirm(request: TRefundInput) {
    void refunder.confirm(request).then((outcome) => {
      setAsked(null);
      // Another refund needs its own reason: a press after this one finished is not taken as it.
      if (outcome.kind === "succeeded") setReason("");
      router.refresh();
    });
  }

  return (
    <form onSubmit={submit} className="stack refund-form" aria-label={`Refund payment ${paymentId}`}>
      <fieldset className="filters" disabled={!hydrated || asked !== null}>
        <div>
          <label htmlFor={`${id}-amount`}>Amount to refund ({currency})</label>
          <input
            id={`${id}-amount`}
            name="amount"
            inputMode="decimal"
            autoComplete="off"
            value={amount}
            aria-describedby={`${id}-summary`}
            onChange={(e) => setAmount(e.target.value)}
          />
        </div>
        <div className="grow">
          <label htmlFor={`${id}-reason`}>Reason</label>
          <input
            id={`${id}-reason`}
            name="reason"
            maxLength={200}
            autoComplete="off"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        </div>
        <div className="filter-actions">
          <button type="submit" disabled={running} aria-busy={running}>
            {running ? "Refunding…" : "Refund"}
          </button>
        </div>
      </fieldset>
      <RefundSummary
        id={`${id}-summary`}
        amount={amount}
        currency={currency}
        refundableMinor={refundableMinor}
      />
      {/* One outcome at a time: the confirmation, a refusal or the last result, never stacked. */}
      {asked ? (
        <RefundConfirmation
          request={asked}
          resumes={unfinished !== null}
          currency={currency}
          refundableMinor={refundableMinor}
          running={running}
          onConfirm={() => confirm(asked)}
          onCancel={() => setAsked(null)}
        >
          {running && <RefundProgress state={state} currency={currency} refundableMinor={refundableMinor} />}
        </RefundConfirmation>
      ) : invalid ? (
        <p role="alert" className="error">
          {invalid}
        </p>
      ) : (
        <RefundProgress state={state} currency={currency} refundableMinor={refundableMinor} />
      )}
    </form>
  );
}

/**
 * The second press: what goes back, in which currency, and what stays refundable. Confirm stays
 * while the refund runs (disabled), so a press that gets through anyway joins it.
 */
function RefundConfirmation({
  request,
  resumes,
  currency,
  refundableMinor,
  running,
  onConfirm,
  onCancel,
  children,
}: {
  request: TRefundInput;
  resumes: boolean;
  currency: string;
  refundableMinor: number;
  running: boolean;
  onConfirm(): void;
  onCancel(): void;
  children: ReactNode;
}) {
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => confirmRef.current?.focus(), []);
  const after = Math.max(0, refundableMinor - request.amountMinor);
  return (
    <fieldset className="refund-confirm" data-testid="refund-confirm">
      <legend>Confirm the refund</legend>
      <p>
        {resumes
          ? `The refund of ${formatMoney(request.amountMinor, currency)} (${currency}) is not confirmed yet. Confirm checks it again with the same key; nothing is refunded twice.`
          : `Refund ${formatMoney(request.amountMinor, currency)} (${currency}) for “${request.reason}”? ${formatMoney(after, currency)} stays refundable after it.`}
      </p>
      <div className="filter-actions">
        <button ref={confirmRef} type="button" onClick={onConfirm} disabled={running} aria-busy={running}>
          {running ? "Refunding…" : "Confirm"}
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={running}>
          Cancel
        </button>
      </div>
      {children}
    </fieldset>
  );
}

/** What pressing Refund will do, read before pressing: the amount and what stays refundable. */
function RefundSummary({
  id,
  amount,
  currency,
  refundableMinor,
}: {
  id: string;
  amount: string;
  currency: string;
  refundableMinor: number;
}) {
  const amountMinor = parseMoney(amount, currency);
  const left = formatMoney(refundableMinor, currency);
  const text =
    amountMinor === null || amountMinor <= 0
      ? `${left} is left to refund.`
      : amountMinor > refundableMinor
        ? `More than the ${left} left to refund.`
        : `Refunds ${formatMoney(amountMinor, currency)} of the ${left} left; ${formatMoney(refundableMinor - amountMinor, currency)} stays refundable.`;
  return (
    <p id={id} className="muted" data-testid="refund-summary">
      {text}
    </p>
  );
}

function RefundProgress({
  state,
  currency,
  refundableMinor,
}: {
  state: RefundState;
  currency: string;
  refundableMinor: number;
}) {
  if (state.phase === "idle") return null;
  if (state.phase === "running") {
    const { progress, intent } = state;
    const what = `Refunding ${formatMoney(intent.request.amountMinor, currency)}…`;
    const retry = progress.retry
      ? progress.retry.reason === "in_flight"
        ? " The refund is still being processed; checking again shortly."
        : " No answer yet; retrying with the same key."
      : "";
    return (
      <p role="status" className="muted" data-testid="refund-progress">
        {what}
        {retry}
      </p>
    );
  }
  return <RefundResult outcome={state.outcome} currency={currency} refundableMinor={refundableMinor} />;
}

function RefundResult({
  outcome,
  currency,
  refundableMinor,
}: {
  outcome: RefundOutcome;
  currency: string;
  refundableMinor: number;
}) {
  switch (outcome.kind) {
    case "succeeded":
      return (
        <p role="status" className="success" data-testid="refund-result">
          Refunded {formatMoney(outcome.refund.amountMinor, currency)} (refund{" "}
          <span className="mono" data-testid="refund-id">
            {outcome.refund.id}
          </span>
          , {outcome.refund.status}).
        </p>
      );
    case "refused": {
      const left = outcome.refundableMinor ?? refundableMinor;
      return (
        <p role="alert" className="error" data-testid="refund-refused">
          Refund refused: {outcome.message}
          {outcome.reason === "amount_invalid_for_currency"
            ? ""
            : ` Only ${formatMoney(left, currency)} is left to refund on this payment.`}
        </p>
      );
    }
    default:
      return (
        <p role="alert" className="error">
          {outcome.message}
        </p>
      );
  }
}
