import sqlTag, { empty, join, raw, Sql } from "sql-template-tag";

/**
 * SQL composition for statements that several modules write into (decision 0101). The tag is
 * sql-template-tag's (the one Prisma.sql is vendored from): values become `$n` parameters, and a
 * `Sql` interpolated into another is inlined. Use this module's copy, so nesting recognises it.
 */
export { empty, join, raw, Sql, sqlTag as sql };

/** What any driver runs: text with `$n` placeholders and its values (a `Sql` is one). */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * A common table expression of a statement being built, known by a name the builder generated.
 * Interpolate it where its rows are read (`FROM ${settled}`): no module spells another's CTE name.
 * `TColumns` are the columns its RETURNING gives; a part that reads some of them asks for a
 * `Cte<"id" | "order_id">`, and a CTE returning more is accepted.
 */
export class Cte<TColumns extends string = string> extends Sql {
  declare readonly columns?: (column: TColumns) => void;
  constructor(readonly name: string) {
    super([name], []);
  }
}

/**
 * A condition a statement must meet, else the whole statement raises and commits nothing. The
 * database raises it with SQLSTATE `REQUIREMENT_SQLSTATE` and the code as the error's CONSTRAINT
 * (and DETAIL); `isRequirementFailure` reads those, never the message.
 */
export interface Requirement {
  readonly code: string;
  /**
   * Failing it means another attempt got there first (the payment is no longer pending, say):
   * a completion fails like a lost fence (LeaseLostError), not as an unexpected error.
   */
  readonly fenced: boolean;
}

const REQUIREMENT_CODE = /^[a-z][a-z0-9_.]{0,62}$/;

export function requirement(code: string, opts: { fenced?: boolean } = {}): Requirement {
  if (!REQUIREMENT_CODE.test(code)) throw new TypeError(`not a requirement code: ${code}`);
  return { code, fenced: opts.fenced ?? false };
}

/** A custom SQLSTATE (class "IC", outside the classes the SQL standard and PostgreSQL use). */
export const REQUIREMENT_SQLSTATE = "IC001";

/** `condition` as a requirement: true, or the statement raises `r`. */
export function requireSql(condition: Sql, r: Requirement): Sql {
  return sqlTag`statement_require(${condition}, ${r.code})`;
}

const HINT = /^[a-z][a-z0-9_]{0,40}$/;

/**
 * Builds one statement from the parts several modules add: each `cte` gets a generated name and
 * returns a typed reference for later parts; each `require` adds a coded condition. Names are
 * numbered in the order parts are added, so the same build gives the same text (a prepared
 * statement reused, not a new one per call).
 */
export class StatementBuilder {
  private readonly parts: Sql[] = [];
  private readonly checks: { condition: Sql; requirement: Requirement }[] = [];

  /** Adds `name AS (body)`; `hint` only makes the generated name readable in plans and logs. */
  cte<TColumns extends string = never>(body: Sql, hint = "part"): Cte<TColumns> {
    if (!HINT.test(hint)) throw new TypeError(`not a CTE name hint: ${hint}`);
    const ref = new Cte<TColumns>(`${hint}_${this.parts.length + 1}`);
    this.parts.push(sqlTag`${ref} AS (${body})`);
    return ref;
  }

  require(condition: Sql, r: Requirement): void {
    this.checks.push({ condition, requirement: r });
  }

  /** The CTEs, comma-separated, for a WITH list; empty when none were added. */
  get ctes(): Sql {
    return this.parts.length > 0 ? join(this.parts, ", ") : empty;
  }

  get hasCtes(): boolean {
    return this.parts.length > 0;
  }

  get requirements(): readonly { condition: Sql; requirement: Requirement }[] {
    return this.checks;
  }

  /** The parts as a statement of their own: `WITH … SELECT <every requirement> AS ok`. */
  statement(): Sql {
    const checks = this.checks.map((c) => requireSql(c.condition, c.requirement));
    const ok = checks.length > 0 ? join(checks, " AND ") : sqlTag`true`;
    return this.hasCtes ? sqlTag`WITH ${this.ctes} SELECT ${ok} AS ok` : sqlTag`SELECT ${ok} AS ok`;
  }
}

/** Statement parts a module adds to a builder (`b`), returning what later parts may read. */
export type StatementPart<T = void> = (b: StatementBuilder) => T;

/**
 * The code of a failed requirement an error carries, or undefined: SQLSTATE `REQUIREMENT_SQLSTATE`
 * and the code in CONSTRAINT (node-postgres) or DETAIL (drivers that keep only the detail, like
 * Prisma's pg adapter), on the error itself or on any error it wraps (`cause`, or Prisma's
 * `meta.driverAdapterError`).
 */
export function failedRequirement(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const o = e as Record<string, unknown>;
    const code = o.code ?? o.originalCode;
    if (code === REQUIREMENT_SQLSTATE) {
      const found = typeof o.constraint === "string" ? o.constraint : o.detail;
      if (typeof found === "string" && REQUIREMENT_CODE.test(found)) return found;
    }
    queue.push(o.cause, o.meta, o.driverAdapterError);
  }
  return undefined;
}

/** True when `error` is the failure of requirement `r`, from whichever driver it came. */
export function isRequirementFailure(error: unknown, r: Requirement): boolean {
  return failedRequirement(error) === r.code;
}

/** What a statement raises when a requirement fails, once the store has read it from the driver. */
export class RequirementFailedError extends Error {
  readonly code = REQUIREMENT_SQLSTATE;
  readonly constraint: string;
  constructor(code: string, cause?: unknown) {
    super(`statement requirement failed: ${code}`, { cause });
    this.constraint = code;
  }
}
