/**
 * `GET /v1/payment_intents/search`: Stripe's Search Query Language, for the fields a checkout asks
 * about (docs.stripe.com/search#search-query-language):
 *
 *   metadata['payment_id']:'…'     exact match of a metadata value (also metadata["k"])
 *   status:'succeeded'  currency:'usd'
 *   amount>1000  amount:1999  created>=1700000000  (>, <, >=, <= and : on numbers)
 *   -status:'canceled'              negation
 *   clauses joined by AND or by OR (not both, as Stripe)
 *
 * Answers `{ object: "search_result", data, has_more, next_page, url }`, newest first; `page` is the
 * `next_page` token of the previous answer. Unlike Stripe's search, which may lag writes by up to a
 * minute, the simulator's sees every committed write at once.
 */
import type { Pool } from "pg";
import type { Reply } from "./http";
import { ParamError, type Params } from "./params";
import { SCHEMA } from "./pg";

type Op = ":" | ">" | "<" | ">=" | "<=";

interface Clause {
  negated: boolean;
  field: string;
  metadataKey?: string;
  op: Op;
  value: string | number;
}

const TOKEN =
  /\s*(?:(AND|OR)\b|(-)?(metadata\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]|[a-z_]+)\s*(>=|<=|:|>|<)\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+)))/y;

function invalid(message: string): ParamError {
  return new ParamError(message, "query", "parameter_invalid");
}

const unquoted = (s: string) => s.replace(/\\(.)/g, "$1");

export function parseQuery(query: string): { clauses: Clause[]; joiner: "AND" | "OR" } {
  const clauses: Clause[] = [];
  let joiner: "AND" | "OR" | null = null;
  let expectClause = true;
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < query.length) {
    if (query.slice(TOKEN.lastIndex).trim() === "") break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(query);
    if (!m)
      throw invalid(`Could not parse the search query at position ${at}: '${query.slice(at, at + 30)}'`);
    if (m[1]) {
      if (expectClause) throw invalid(`Unexpected ${m[1]} at position ${at} of the search query.`);
      const word = m[1] as "AND" | "OR";
      if (joiner !== null && joiner !== word) throw invalid("A search query may not mix AND and OR.");
      joiner = word;
      expectClause = true;
      continue;
    }
    if (!expectClause) throw invalid(`Expected AND or OR at position ${at} of the search query.`);
    const metadataKey = m[4] !== undefined ? unquoted(m[4]) : m[5] !== undefined ? unquoted(m[5]) : undefined;
    const text = m[7] !== undefined ? unquoted(m[7]) : m[8] !== undefined ? unquoted(m[8]) : undefined;
    clauses.push({
      negated: m[2] === "-",
      field: metadataKey !== undefined ? "metadata" : (m[3] as string),
      metadataKey,
      op: m[6] as Op,
      value: text ?? Number(m[9]),
    });
    expectClause = false;
  }
  if (clauses.length === 0 || expectClause) throw invalid("The search query is empty or ends with AND/OR.");
  return { clauses, joiner: joiner ?? "AND" };
}

const NUMERIC = { amount: "amount", created: "created" } as const;
const TEXT = { status: "status", currency: "currency" } as const;

/** One clause as SQL on payment_intents, its values pushed. */
function clauseSql(c: Clause, values: unknown[]): string {
  const push = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  let sql: string;
  if (c.field === "metadata") {
    if (c.op !== ":" || typeof c.value !== "string")
      throw invalid("metadata fields take only ':' with a quoted string.");
    sql = `metadata @> ${push(JSON.stringify({ [c.metadataKey as string]: c.value }))}::jsonb`;
  } else if (c.field in TEXT) {
    if (c.op !== ":" || typeof c.value !== "string")
      throw invalid(`Field '${c.field}' takes only ':' with a quoted string.`);
    sql = `${TEXT[c.field as keyof typeof TEXT]} = ${push(c.value)}`;
  } else if (c.field in NUMERIC) {
    const n = typeof c.value === "number" ? c.value : Number(c.value);
    if (!Number.isInteger(n)) throw invalid(`Field '${c.field}' takes an integer.`);
    const op = c.op === ":" ? "=" : c.op;
    sql =
      c.field === "created"
        ? `date_trunc('second', created) ${op} ${push(new Date(n * 1000))}::timestamptz`
        : `amount ${op} ${push(n)}`;
  } else {
    throw invalid(
      `Field '${c.field}' is an unsupported search field for resource 'payment_intents'. ` +
        "See https://stripe.com/docs/search#query-fields-for-payment-intents for a list of supported fields.",
    );
  }
  return c.negated ? `NOT (${sql})` : sql;
}

function encodePage(created: string, id: string): string {
  return Buffer.from(JSON.stringify([created, id])).toString("base64url");
}

function decodePage(page: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(page, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string"))
      return value as [string, string];
  } catch {
    // Answered below.
  }
  throw new ParamError("Invalid page: use the next_page of an earlier search.", "page", "parameter_invalid");
}

export async function searchIntents(pool: Pool, params: Params): Promise<Reply> {
  params.only("query", "limit", "page");
  const { clauses, joiner } = parseQuery(params.required("query"));
  const limit = params.integer("limit", { min: 1, max: 100 }) ?? 10;
  const page = params.string("page");
  const values: unknown[] = [];
  const match = clauses.map((c) => clauseSql(c, values)).join(` ${joiner} `);
  let after = "";
  if (page !== undefined) {
    const [created, id] = decodePage(page);
    values.push(created, id);
    after = `AND (created, id) < ($${values.length - 1}::timestamptz, $${values.length})`;
  }
  values.push(limit + 1);
  const result = await pool.query<{ object: unknown; created: Date; id: string }>(
    `SELECT object, created, id FROM ${SCHEMA}.payment_intents
      WHERE (${match}) ${after}
      ORDER BY created DESC, id DESC LIMIT $${values.length}`,
    values,
  );
  const rows = result.rows.slice(0, limit);
  const hasMore = result.rows.length > limit;
  const last = rows.at(-1);
  return {
    status: 200,
    body: {
      object: "search_result",
      data: rows.map((r) => r.object),
      has_more: hasMore,
      next_page: hasMore && last ? encodePage(last.created.toISOString(), last.id) : null,
      url: "/v1/payment_intents/search",
    },
  };
}
