import type { Datamodel, DmmfField, DmmfModel } from "./prisma-schema";
import { expectedDefault, type ValueKind, valueKind } from "./schema-defaults";

// What schema.prisma implies for PostgreSQL, named and typed the way Prisma's migrations do it.

export type ExpectedColumn = { type: string; nullable: boolean; default: string | null; kind: ValueKind };
export type ActualColumn = { type: string; nullable: boolean; defaultExpr: string | null; identity: boolean };
export type Named = { table: string; name: string; def: string; allowedExtra?: boolean };
export type Shape<C> = {
  tables: Map<string, Map<string, C>>;
  indexes: Map<string, Named>; // index names are unique per schema
  foreignKeys: Map<string, Named>; // keyed by table.name: FK names are unique per table
  enums: Map<string, string[]>;
};

const MAX_IDENT = 63; // PostgreSQL's NAMEDATALEN - 1, in bytes

function truncateBytes(s: string, max: number): string {
  const buf = Buffer.from(s);
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // stay on a UTF-8 boundary
  return buf.subarray(0, end).toString();
}

/** Prisma's ConstraintNames: {table}_pkey, {table}_{cols}_key / _idx / _fkey, truncated to fit. */
const pkName = (table: string) => `${truncateBytes(table, MAX_IDENT - 5)}_pkey`;
const constraintName = (table: string, cols: string[], suffix: string) =>
  `${truncateBytes(`${table}_${cols.join("_")}`, MAX_IDENT - suffix.length)}${suffix}`;

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  Boolean: "boolean",
  DateTime: "timestamp(3) without time zone",
  Json: "jsonb",
  Bytes: "bytea",
};

/** @db.X(args) as PostgreSQL's format_type() prints it. */
function nativeTypeSql([name, args]: [string, string[]]): string {
  const a = args.length > 0 ? `(${args.join(",")})` : "";
  const time = (base: string, tz: boolean) => `${base}${a} ${tz ? "with" : "without"} time zone`;
  const simple: Record<string, string> = {
    DoublePrecision: "double precision",
    ByteA: "bytea",
    JsonB: "jsonb",
    Integer: "integer",
    SmallInt: "smallint",
    BigInt: "bigint",
  };
  switch (name) {
    case "Char":
      return `character(${args[0] ?? 1})`;
    case "VarChar":
      return `character varying${a}`;
    case "Bit":
      return `bit(${args[0] ?? 1})`;
    case "VarBit":
      return `bit varying${a}`;
    case "Decimal":
      return `numeric${a}`;
    case "Timestamp":
      return time("timestamp", false);
    case "Timestamptz":
      return time("timestamp", true);
    case "Time":
      return time("time", false);
    case "Timetz":
      return time("time", true);
    default:
      return simple[name] ?? `${name.toLowerCase()}${a}`;
  }
}

export function describeIndex(i: {
  primary: boolean;
  unique: boolean;
  method: string;
  table: string;
  columns: string[];
  desc: boolean[];
}) {
  const kind = i.primary ? "PRIMARY KEY" : i.unique ? "UNIQUE INDEX" : "INDEX";
  const using = i.method === "btree" ? "" : ` USING ${i.method}`;
  const cols = i.columns.map((c, n) => `"${c}"${i.desc[n] ? " DESC" : ""}`).join(", ");
  return `${kind}${using} ON "${i.table}" (${cols})`;
}

const ACTIONS: Record<string, string> = {
  Cascade: "CASCADE",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetNull: "SET NULL",
  SetDefault: "SET DEFAULT",
  c: "CASCADE",
  r: "RESTRICT",
  a: "NO ACTION",
  n: "SET NULL",
  d: "SET DEFAULT",
};
const quoted = (cols: string[]) => cols.map((c) => `"${c}"`).join(", ");
export const describeFk = (
  cols: string[],
  refTable: string,
  refCols: string[],
  onDelete: string,
  onUpdate: string,
) =>
  `FOREIGN KEY (${quoted(cols)}) REFERENCES "${refTable}" (${quoted(refCols)}) ` +
  `ON DELETE ${ACTIONS[onDelete]} ON UPDATE ${ACTIONS[onUpdate]}`;

type TextFacts = {
  fkNames: Map<string, string>;
  unsupported: Map<string, { column: string; optional: boolean }[]>;
};

/** What the DMMF leaves out (FK `map:` names, Unsupported("…") fields) is read from the model text. */
function scanModelText(schemaText: string): TextFacts {
  const facts: TextFacts = { fkNames: new Map(), unsupported: new Map() };
  for (const block of schemaText.matchAll(/^\s*model\s+(\w+)\s*\{([\s\S]*?)^\s*\}/gm)) {
    const model = block[1] ?? "";
    for (const raw of (block[2] ?? "").split("\n")) {
      const line = raw.replace(/\/\/.*$/, "");
      const rel = /^\s*(\w+)\s.*@relation\(([^)]*)\)/.exec(line);
      const map = rel && /\bmap:\s*"([^"]*)"/.exec(rel[2] ?? "");
      if (rel && map) facts.fkNames.set(`${model}.${rel[1]}`, map[1] ?? "");
      const un = /^\s*(\w+)\s+Unsupported\("[^"]*"\)(\?)?/.exec(line);
      if (un) {
        const column = /@map\("([^"]*)"\)/.exec(line)?.[1] ?? un[1] ?? "";
        const list = facts.unsupported.get(model) ?? [];
        list.push({ column, optional: un[2] === "?" });
        facts.unsupported.set(model, list);
      }
    }
  }
  return facts;
}

export function expectedShape(dm: Datamodel, schemaText: string): Shape<ExpectedColumn> {
  const shape: Shape<ExpectedColumn> = {
    tables: new Map(),
    indexes: new Map(),
    foreignKeys: new Map(),
    enums: new Map(),
  };
  const models = new Map(dm.models.map((m) => [m.name, m]));
  const enums = new Map(dm.enums.map((e) => [e.name, e]));
  // PostgreSQL silently truncates long identifiers, so the expected names are truncated too.
  const tableOf = (m: DmmfModel) => truncateBytes(m.dbName ?? m.name, MAX_IDENT);
  const colOf = (m: DmmfModel, name: string) =>
    truncateBytes(m.fields.find((f) => f.name === name)?.dbName ?? name, MAX_IDENT);
  const typeOf = (f: DmmfField): string => {
    const e = f.kind === "enum" ? enums.get(f.type) : undefined;
    const base = e
      ? (e.dbName ?? e.name)
      : f.nativeType
        ? nativeTypeSql(f.nativeType)
        : (SCALAR_TYPES[f.type] ?? f.type.toLowerCase());
    return f.isList ? `${base}[]` : base;
  };
  const text = scanModelText(schemaText);
  const relationMode = /^\s*relationMode\s*=\s*"prisma"/m.test(schemaText) ? "prisma" : "foreignKeys";

  for (const e of dm.enums)
    shape.enums.set(
      e.dbName ?? e.name,
      e.values.map((v) => v.dbName ?? v.name),
    );
  for (const m of dm.models) {
    const table = tableOf(m);
    const columns = new Map<string, ExpectedColumn>();
    for (const f of m.fields) {
      if (f.kind !== "scalar" && f.kind !== "enum") continue;
      const e = enums.get(f.type);
      const enumValue = (v: string) => e?.values.find((x) => x.name === v)?.dbName ?? v;
      // Scalar lists are created nullable by Prisma, required or not.
      columns.set(colOf(m, f.name), {
        type: typeOf(f),
        nullable: f.isList || !f.isRequired,
        default: expectedDefault(f, enumValue),
        kind: valueKind(f),
      });
    }
    // Unsupported types are not in the DMMF; their type text is free-form, so only presence counts.
    for (const u of text.unsupported.get(m.name) ?? []) {
      columns.set(truncateBytes(u.column, MAX_IDENT), {
        type: "*",
        nullable: u.optional,
        default: "*",
        kind: "string",
      });
    }
    shape.tables.set(table, columns);

    for (const f of m.fields) {
      const target = f.kind === "object" ? models.get(f.type) : undefined;
      if (!target || relationMode === "prisma" || !f.relationFromFields?.length) continue;
      const cols = f.relationFromFields.map((n) => colOf(m, n));
      const name = text.fkNames.get(`${m.name}.${f.name}`) ?? constraintName(table, cols, "_fkey");
      const refCols = (f.relationToFields ?? []).map((n) => colOf(target, n));
      const onDelete = f.relationOnDelete ?? (f.isRequired ? "Restrict" : "SetNull");
      const def = describeFk(cols, tableOf(target), refCols, onDelete, f.relationOnUpdate ?? "Cascade");
      shape.foreignKeys.set(`${table}.${name}`, { table, name, def });
    }
  }

  for (const ix of dm.indexes) {
    const m = models.get(ix.model);
    if (!m || ix.type === "fulltext") continue;
    const table = tableOf(m);
    const columns = ix.fields.map((f) => colOf(m, f.name));
    const primary = ix.type === "id";
    const unique = ix.type !== "normal";
    const name =
      ix.dbName ?? (primary ? pkName(table) : constraintName(table, columns, unique ? "_key" : "_idx"));
    const method = (ix.algorithm ?? "BTree").toLowerCase();
    const desc = ix.fields.map((f) => f.sortOrder === "desc");
    shape.indexes.set(name, {
      table,
      name,
      def: describeIndex({ primary, unique, method, table, columns, desc }),
    });
  }

  addImplicitManyToMany(dm, shape, relationMode === "prisma", typeOf, tableOf);
  return shape;
}

/** Implicit m:n relations get a join table `_{relation}` with columns A and B (A = first model by name). */
function addImplicitManyToMany(
  dm: Datamodel,
  shape: Shape<ExpectedColumn>,
  noForeignKeys: boolean,
  typeOf: (f: DmmfField) => string,
  tableOf: (m: DmmfModel) => string,
) {
  const seen = new Set<string>();
  for (const m of dm.models) {
    for (const f of m.fields) {
      if (f.kind !== "object" || !f.isList || !f.relationName || seen.has(f.relationName)) continue;
      const other = dm.models.find((x) => x.name === f.type);
      // Both sides are lists only for an implicit m:n (a self-relation has two fields on one model).
      const back = other?.fields.find(
        (x) => x.relationName === f.relationName && x.kind === "object" && x !== f,
      );
      if (!other || !back?.isList) continue;
      seen.add(f.relationName);
      const table = `_${f.relationName}`;
      const [a, b] = [m, other].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)) as [
        DmmfModel,
        DmmfModel,
      ];
      const columns = new Map<string, ExpectedColumn>();
      for (const [col, model] of [
        ["A", a],
        ["B", b],
      ] as const) {
        const id = model.fields.find((x) => x.isId);
        if (!id) continue;
        columns.set(col, {
          type: typeOf({ ...id, isList: false }),
          nullable: false,
          default: null,
          kind: "string",
        });
        if (!noForeignKeys) {
          const name = truncateBytes(`${table}_${col}_fkey`, MAX_IDENT);
          const def = describeFk([col], tableOf(model), [id.dbName ?? id.name], "Cascade", "Cascade");
          shape.foreignKeys.set(`${table}.${name}`, { table, name, def });
        }
      }
      shape.tables.set(table, columns);
      const btree = { method: "btree", table, unique: true };
      const pk = { ...btree, primary: true, columns: ["A", "B"], desc: [false, false] };
      const bIdx = { ...btree, unique: false, primary: false, columns: ["B"], desc: [false] };
      for (const [suffix, ix] of [
        ["_AB_pkey", pk],
        ["_B_index", bIdx],
      ] as const) {
        const name = truncateBytes(`${table}${suffix}`, MAX_IDENT);
        shape.indexes.set(name, { table, name, def: describeIndex(ix) });
      }
    }
  }
}
