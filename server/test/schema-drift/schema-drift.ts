import pg from "pg";
import { parseSchema } from "./prisma-schema";
import { canonActualDefault } from "./schema-defaults";
import {
  type ActualColumn,
  describeFk,
  describeIndex,
  type ExpectedColumn,
  expectedShape,
  type Named,
  type Shape,
} from "./schema-expected";

// Compares what schema.prisma declares with what a database actually has. Raw-SQL extras that
// Prisma cannot express (CHECK constraints, triggers, functions, partial or expression indexes)
// are not drift; extra tables, columns, enums, full indexes and foreign keys are.

const Q = {
  tables: `SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations'`,
  columns: `SELECT c.relname AS table, a.attname AS column, NOT a.attnotnull AS nullable, a.attidentity <> '' AS identity,
      CASE WHEN t.typtype = 'e' THEN t.typname::text
           WHEN et.typtype = 'e' THEN et.typname || '[]'
           ELSE format_type(a.atttypid, a.atttypmod) END AS type,
      pg_get_expr(d.adbin, d.adrelid) AS default
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum`,
  indexes: `SELECT i.relname AS name, t.relname AS table, ix.indisunique AS unique, ix.indisprimary AS primary,
      am.amname AS method, ix.indpred IS NOT NULL OR ix.indexprs IS NOT NULL AS partial_or_expr,
      EXISTS (SELECT 1 FROM pg_constraint x WHERE x.conindid = i.oid AND x.contype = 'x') AS exclusion,
      ARRAY(SELECT a.attname::text FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
            WHERE k.ord <= ix.indnkeyatts ORDER BY k.ord) AS columns,
      ARRAY(SELECT (o.opt & 1) = 1 FROM unnest(ix.indoption::int2[]) WITH ORDINALITY o(opt, ord) ORDER BY o.ord) AS desc
    FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace JOIN pg_am am ON am.oid = i.relam
    WHERE n.nspname = current_schema()`,
  foreignKeys: `SELECT c.conname AS name, t.relname AS table, rt.relname AS ref_table,
      c.confdeltype AS on_delete, c.confupdtype AS on_update,
      ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
      ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS ref_columns
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    JOIN pg_class rt ON rt.oid = c.confrelid WHERE c.contype = 'f' AND n.nspname = current_schema()`,
  enums: `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
    FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = current_schema() GROUP BY t.typname`,
};

// biome-ignore lint/suspicious/noExplicitAny: rows of the catalog queries above
type AnyRow = Record<string, any>;

export async function introspect(client: pg.Client): Promise<Shape<ActualColumn>> {
  const run = async (sql: string) => (await client.query<AnyRow>(sql)).rows;
  const shape: Shape<ActualColumn> = {
    tables: new Map(),
    indexes: new Map(),
    foreignKeys: new Map(),
    enums: new Map(),
  };
  for (const r of await run(Q.tables)) shape.tables.set(r.table, new Map());
  for (const r of await run(Q.columns)) {
    const col = { type: r.type, nullable: r.nullable, defaultExpr: r.default, identity: r.identity };
    shape.tables.get(r.table)?.set(r.column, col);
  }
  for (const r of await run(Q.indexes)) {
    const { primary, unique, method, table, columns, desc } = r;
    const def = describeIndex({ primary, unique, method, table, columns, desc });
    shape.indexes.set(r.name, { table, name: r.name, def, allowedExtra: r.partial_or_expr || r.exclusion });
  }
  for (const r of await run(Q.foreignKeys)) {
    const def = describeFk(r.columns, r.ref_table, r.ref_columns, r.on_delete, r.on_update);
    shape.foreignKeys.set(`${r.table}.${r.name}`, { table: r.table, name: r.name, def });
  }
  for (const r of await run(Q.enums)) shape.enums.set(r.name, r.values);
  return shape;
}

export function compareShapes(want: Shape<ExpectedColumn>, have: Shape<ActualColumn>): string[] {
  const drift: string[] = [];
  for (const table of want.tables.keys()) {
    if (!have.tables.has(table)) drift.push(`table "${table}" is in schema.prisma but not in the database`);
  }
  for (const table of have.tables.keys()) {
    if (!want.tables.has(table)) drift.push(`table "${table}" is in the database but not in schema.prisma`);
  }
  for (const [table, wantCols] of want.tables) {
    const haveCols = have.tables.get(table);
    if (!haveCols) continue;
    for (const [name, w] of wantCols) {
      const h = haveCols.get(name);
      const where = `column "${table}"."${name}"`;
      if (!h) {
        drift.push(`${where} is in schema.prisma but not in the database`);
        continue;
      }
      if (w.type !== "*" && h.type !== w.type)
        drift.push(`${where}: type is ${h.type} in the database, schema.prisma says ${w.type}`);
      if (h.nullable !== w.nullable) {
        const n = (b: boolean) => (b ? "nullable" : "NOT NULL");
        drift.push(`${where}: ${n(h.nullable)} in the database, ${n(w.nullable)} in schema.prisma`);
      }
      const hd = canonActualDefault(h, w.kind);
      if (w.default !== "*" && hd !== w.default) {
        drift.push(
          `${where}: default is ${h.defaultExpr ?? "none"} in the database, schema.prisma says ${w.default ?? "none"}`,
        );
      }
    }
    for (const name of haveCols.keys()) {
      if (!wantCols.has(name))
        drift.push(`column "${table}"."${name}" is in the database but not in schema.prisma`);
    }
  }
  for (const [name, w] of want.enums) {
    const h = have.enums.get(name);
    if (!h) drift.push(`enum "${name}" is in schema.prisma but not in the database`);
    else if ([...w].sort().join(",") !== [...h].sort().join(",")) {
      drift.push(
        `enum "${name}": values are [${h.join(", ")}] in the database, schema.prisma says [${w.join(", ")}]`,
      );
    }
  }
  for (const name of have.enums.keys()) {
    if (!want.enums.has(name)) drift.push(`enum "${name}" is in the database but not in schema.prisma`);
  }
  compareNamed("index", want.indexes, have.indexes, want.tables, have.tables, drift);
  compareNamed("foreign key", want.foreignKeys, have.foreignKeys, want.tables, have.tables, drift);
  return drift;
}

function compareNamed(
  what: string,
  want: Map<string, Named>,
  have: Map<string, Named>,
  wantTables: Map<string, unknown>,
  haveTables: Map<string, unknown>,
  drift: string[],
) {
  // Objects on a table that is itself missing or extra were already reported with the table.
  for (const [key, w] of want) {
    if (!haveTables.has(w.table)) continue;
    const h = have.get(key);
    if (!h) drift.push(`${what} "${w.name}" is in schema.prisma but not in the database: ${w.def}`);
    else if (h.def !== w.def)
      drift.push(`${what} "${w.name}": database has ${h.def}, schema.prisma says ${w.def}`);
  }
  for (const [key, h] of have) {
    if (want.has(key) || h.allowedExtra || !wantTables.has(h.table)) continue;
    drift.push(`${what} "${h.name}" is in the database but not in schema.prisma: ${h.def}`);
  }
}

/** Lists every difference between schemaText and the database at databaseUrl (current schema). */
export async function findDrift(databaseUrl: string, schemaText: string): Promise<string[]> {
  const want = expectedShape(parseSchema(schemaText), schemaText);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return compareShapes(want, await introspect(client));
  } finally {
    await client.end();
  }
}
