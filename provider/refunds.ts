/**
 * Refunds: `POST /v1/refunds` of a PaymentIntent's captured charge (`payment_intent`, or `charge`),
 * `GET /v1/refunds/:id`, `GET /v1/refunds` (filters `payment_intent`, `charge`, `created`).
 *
 * The charge's row is locked for the refund, so concurrent refunds of one charge serialise on it and
 * each sees what its predecessors left; the column's CHECK (`amount_refunded <= amount_captured`)
 * refuses an over-refund whatever runs the statement. Refusals, as Stripe answers them:
 * 404 `resource_missing` (no such PaymentIntent or charge), 400 `charge_not_refundable` (no
 * captured charge: declined, canceled, awaiting action or capture), 400 `charge_already_refunded`
 * (nothing left), 400 `amount_too_large` (more than is left).
 */
import type { Pool } from "pg";
import { amountProblem } from "../shared/currency";
import { type EventRequest, recordEvents } from "./events";
import { notFound, type Reply, stripeError } from "./http";
import { createdFilter, type ListPage, listPage, pageParams } from "./lists";
import { type Charge, changedFrom, newRefund, type PaymentIntent } from "./objects";
import { ParamError, type Params } from "./params";
import type { IntentContext } from "./payment-intents";
import { SCHEMA, timeOrderedId } from "./pg";

const REASONS = ["duplicate", "fraudulent", "requested_by_customer"] as const;

export function readRefund(params: Params) {
  params.only("payment_intent", "charge", "amount", "metadata", "reason");
  const input = {
    paymentIntent: params.string("payment_intent"),
    charge: params.string("charge"),
    amount: params.amount("amount"),
    metadata: params.metadata() ?? {},
    reason: params.oneOf("reason", REASONS) ?? null,
  };
  if (input.paymentIntent === undefined && input.charge === undefined)
    throw new ParamError(
      "One of the following params should be provided for this request: payment_intent or charge.",
      "payment_intent",
      "parameter_missing",
    );
  return input;
}

export async function createRefund(
  ctx: Pick<IntentContext, "client" | "recorder"> & { request: EventRequest },
  input: ReturnType<typeof readRefund>,
): Promise<Reply> {
  const { client } = ctx;
  let chargeId = input.charge;
  if (input.paymentIntent !== undefined) {
    const found = await client.query<{ object: PaymentIntent }>(
      `SELECT object FROM ${SCHEMA}.payment_intents WHERE id = $1`,
      [input.paymentIntent],
    );
    const pi = found.rows[0]?.object;
    if (!pi) return notFound("payment_intent", input.paymentIntent, "payment_intent");
    if (pi.status !== "succeeded" || !pi.latest_charge) {
      return stripeError(
        400,
        "invalid_request_error",
        `This PaymentIntent (${pi.id}) does not have a successful charge to refund: its status is ${pi.status}.`,
        { code: "charge_not_refundable", param: "payment_intent" },
      );
    }
    if (chargeId !== undefined && chargeId !== pi.latest_charge) {
      return stripeError(
        400,
        "invalid_request_error",
        `Charge ${chargeId} does not belong to PaymentIntent ${pi.id}.`,
        {
          param: "charge",
        },
      );
    }
    chargeId = pi.latest_charge;
  }
  const locked = await client.query<{ object: Charge; amount_captured: string; amount_refunded: string }>(
    `SELECT object, amount_captured, amount_refunded FROM ${SCHEMA}.charges WHERE id = $1 FOR UPDATE`,
    [chargeId],
  );
  const row = locked.rows[0];
  if (!row) return notFound("charge", chargeId as string, "charge");
  const charge = row.object;
  if (charge.status !== "succeeded" || !charge.captured) {
    return stripeError(
      400,
      "invalid_request_error",
      `Charge ${charge.id} cannot be refunded: it ${charge.status === "failed" ? "failed" : "has not been captured"}.`,
      {
        code: "charge_not_refundable",
        param: input.paymentIntent !== undefined ? "payment_intent" : "charge",
      },
    );
  }
  const rest = Number(row.amount_captured) - Number(row.amount_refunded);
  if (rest === 0) {
    return stripeError(400, "invalid_request_error", `Charge ${charge.id} has already been refunded.`, {
      code: "charge_already_refunded",
      charge: charge.id,
    });
  }
  const problem = input.amount === undefined ? null : amountProblem(input.amount, charge.currency, "refund");
  if (problem)
    return stripeError(400, "invalid_request_error", problem.message, {
      code: problem.code,
      param: "amount",
    });
  const amount = input.amount ?? rest;
  if (amount > rest) {
    return stripeError(
      400,
      "invalid_request_error",
      `Refund amount (${amount}) is greater than unrefunded amount on charge (${rest})`,
      { code: "amount_too_large", param: "amount" },
    );
  }
  const now = new Date();
  const refund = newRefund(timeOrderedId("re"), now, charge, amount, input.metadata, input.reason);
  const refunded = Number(row.amount_refunded) + amount;
  const after: Charge = {
    ...charge,
    amount_refunded: refunded,
    refunded: refunded === charge.amount_captured,
  };
  await client.query(`UPDATE ${SCHEMA}.charges SET amount_refunded = $2, object = $3 WHERE id = $1`, [
    charge.id,
    refunded,
    JSON.stringify(after),
  ]);
  await client.query(
    `INSERT INTO ${SCHEMA}.refunds (id, payment_intent, charge, created, amount, object) VALUES ($1, $2, $3, $4, $5, $6)`,
    [refund.id, refund.payment_intent, refund.charge, now, amount, JSON.stringify(refund)],
  );
  await recordEvents(
    client,
    ctx.request,
    [
      { type: "refund.created", object: refund },
      { type: "charge.refunded", object: after, previous: changedFrom(charge, after) },
    ],
    ctx.recorder,
  );
  return { status: 200, body: refund };
}

export async function findRefund(pool: Pool, id: string): Promise<Reply> {
  const found = await pool.query<{ object: unknown }>(`SELECT object FROM ${SCHEMA}.refunds WHERE id = $1`, [
    id,
  ]);
  const refund = found.rows[0];
  return refund ? { status: 200, body: refund.object } : notFound("refund", id, "id");
}

export async function listRefunds(pool: Pool, params: Params): Promise<ListPage> {
  params.only("limit", "starting_after", "ending_before", "created", "payment_intent", "charge");
  const page = pageParams(params);
  const where: string[] = [];
  const values: unknown[] = [];
  const created = createdFilter(params, values);
  if (created) where.push(created);
  for (const column of ["payment_intent", "charge"] as const) {
    const value = params.string(column);
    if (value === undefined) continue;
    values.push(value);
    where.push(`${column} = $${values.length}`);
  }
  return listPage(pool, { table: "refunds", noun: "refund", where, values }, page);
}
