import { sql } from "@idempotent-checkout/idempotency/sql";
import type { Db } from "../db";
import { domainErrors } from "../errors";
import { askProvider, keyedOperation, type Refusal } from "../operation";
import { paymentView, type TPaymentView } from "../payments/views";
import { type Charge, isProviderError, type PaymentProvider } from "../provider";
import { type ActionRequest, createAction } from "./create";
import { settleCancel, settleCapture } from "./settle";
import {
  ACTION_COLUMNS,
  ACTION_REQUESTED,
  type ActionKind,
  type TrackedAction,
  trackedFromRow,
} from "./tracked";

export const CAPTURE_PROCEDURE = "payments.capture";
export const CANCEL_PROCEDURE = "payments.cancel";

export interface AuthorizationDeps {
  prisma: Db;
  provider: PaymentProvider;
}

/** What the provider made for an action: the payment as it then stands, named by the action. */
type Made = Charge & { metadata: Record<string, string> };

/** The request the keys store (the REST path's `id`, a capture's `amountMinor`, an expiry's reason). */
export interface StoredActionParams {
  id: string;
  amountMinor?: number;
  reason?: "expiry";
}
export const requestOfParams = (p: StoredActionParams): ActionRequest => ({
  paymentId: p.id,
  amountMinor: p.amountMinor,
  reason: p.reason ?? "operator",
  createdBy: "completer",
});

const PARAMETER_REFUSALS = new Set([
  "parameter_missing",
  "parameter_unknown",
  "parameter_invalid",
  "parameter_invalid_integer",
]);

/**
 * One capture or cancel of an authorized payment, as a keyed operation: phase 1 inserts the
 * action (one open per payment), phase 2 asks the provider with a key derived from ours, phase 3
 * settles the payment and its hold in one statement with the key's completion. Expiry is a cancel
 * whose key the server makes itself (./expiry.ts).
 */
function authorizationAction(
  kind: ActionKind,
  terms: {
    /** What the provider did for this action, when the payment now shows it (a resumed attempt). */
    shows: (charge: Charge) => boolean;
    /** Refusals proving nothing was done for this request. */
    refusals: ReadonlySet<string>;
    send: (
      deps: AuthorizationDeps,
      row: TrackedAction,
      key: string,
      opts?: { fault: string },
    ) => Promise<Charge>;
    finish: (row: TrackedAction, charge: Charge) => ReturnType<typeof settleCapture>;
  },
) {
  const procedure = kind === "capture" ? CAPTURE_PROCEDURE : CANCEL_PROCEDURE;
  const named = (charge: Charge, row: TrackedAction): Made => ({
    ...charge,
    metadata: { action_id: row.id },
  });
  return keyedOperation<AuthorizationDeps, ActionRequest, TrackedAction, Made, TPaymentView, TrackedAction>({
    procedure,
    failpoints: { created: `after_${kind}_created`, provider: `after_provider_${kind}` },
    createdPoint: `${kind}_created`,
    rows: {
      columns: ACTION_COLUMNS,
      from: sql`authorization_actions a JOIN payments p ON p.id = a.payment_id`,
      alias: "a",
      mark: ACTION_REQUESTED,
      fromRow: trackedFromRow,
    },
    create: (tx, owner, request) => createAction(tx, owner, kind, request),
    requestOf: (key) => requestOfParams(key.requestParams as StoredActionParams),
    provider: {
      definiteRefusal: ({ code }) => terms.refusals.has(code) || PARAMETER_REFUSALS.has(code),
      inFlight: domainErrors.inFlightAtProvider,
      // The provider keeps one payment per authorization: what an earlier attempt did shows on it.
      list: async function* (deps, _filter, row) {
        const charge = await deps.provider.getCharge(row.providerChargeId);
        if (charge && terms.shows(charge)) yield named(charge, row);
      },
      rowIdKey: "action_id",
      request: (row) => row,
      send: async (deps, row, key, opts) => named(await terms.send(deps, row, key, opts), row),
      check: (made, row) => {
        if (made.id !== row.providerChargeId || !terms.shows(made))
          throw new Error(`provider payment ${made.id} (${made.status}) does not show ${kind} ${row.id}`);
        return made;
      },
    },
    abandoned: (row) =>
      domainErrors.paymentNotCapturable({ id: row.paymentId, status: "authorized" }, "abandoned"),
    refused: refusalAnswer,
    finish: async (_deps, owner, row, made) => {
      const status = kind === "capture" ? "succeeded" : "canceled";
      const view = paymentView({
        id: row.paymentId,
        orderId: row.orderId,
        amountMinor: row.authorizedMinor,
        currency: row.currency,
        status,
        providerChargeId: row.providerChargeId,
        captureMethod: "manual",
        capturedMinor: kind === "capture" ? made.amountReceived : null,
      });
      return owner.completeWith(terms.finish(row, made), view);
    },
  });
}

/** A definite refusal's answer, in the provider's own terms: the state the payment is in there. */
async function refusalAnswer(deps: AuthorizationDeps, row: TrackedAction, refusal: Refusal) {
  const payment = { id: row.paymentId, status: "authorized" };
  if (refusal.code === "amount_too_large")
    return domainErrors.invalid(`The provider refused the amount: ${refusal.refused}`, {
      reason: "capture_exceeds_authorized",
      authorizedMinor: row.authorizedMinor,
    });
  if (refusal.code !== "payment_intent_unexpected_state")
    return domainErrors.paymentNotCapturable(payment, refusal.code);
  const now = await askProvider(
    () => deps.provider.getCharge(row.providerChargeId),
    domainErrors.inFlightAtProvider,
  );
  const state =
    now?.status === "succeeded"
      ? "captured"
      : now?.status === "canceled"
        ? now.cancellationReason === "automatic"
          ? "expired"
          : "canceled"
        : (now?.status ?? "missing");
  return domainErrors.paymentNotCapturable(payment, `${state} at the provider`);
}

/** Capture: all of the hold or `amountMinor` of it; the provider releases the rest. */
export const capture = authorizationAction("capture", {
  shows: (charge) => charge.status === "succeeded",
  refusals: new Set(["payment_intent_unexpected_state", "amount_too_large"]),
  send: (deps, row, key, opts) =>
    deps.provider.captureCharge(
      row.providerChargeId,
      { ...(row.amountMinor !== null && { amount: row.amountMinor }), metadata: { capture_id: row.id } },
      key,
      opts,
    ),
  finish: settleCapture,
});

/**
 * Cancel (an operator's void, or the expiry): the hold released at the provider. A payment the
 * provider already canceled (its own expiry) is what this cancel wanted: settled as done.
 */
export const cancel = authorizationAction("cancel", {
  shows: (charge) => charge.status === "canceled",
  refusals: new Set(["payment_intent_unexpected_state"]),
  send: async (deps, row, key, opts) => {
    const reason = row.reason === "expiry" ? "abandoned" : "requested_by_customer";
    try {
      return await deps.provider.cancelCharge(row.providerChargeId, { reason }, key, opts);
    } catch (error) {
      if (!(isProviderError(error) && error.code === "payment_intent_unexpected_state")) throw error;
      const now = await deps.provider.getCharge(row.providerChargeId);
      if (now?.status === "canceled") return now;
      throw error;
    }
  },
  finish: (row) => settleCancel(row),
});
