import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// Reads schema.prisma with Prisma's own parser: the prisma CLI ships it as a wasm-bindgen module
// (build/prisma_schema_build_bg.wasm) whose JS glue is bundled away, so this is a minimal glue.

export type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUpdatedAt: boolean;
  nativeType?: [string, string[]] | null;
  default?: unknown;
  relationName?: string;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
};
export type DmmfModel = { name: string; dbName: string | null; fields: DmmfField[] };
export type DmmfEnum = {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName: string | null }[];
};
export type DmmfIndex = {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string;
  algorithm?: string;
  fields: { name: string; sortOrder?: "asc" | "desc" }[];
};
export type Datamodel = { models: DmmfModel[]; enums: DmmfEnum[]; indexes: DmmfIndex[] };

type Exports = {
  memory: WebAssembly.Memory;
  __wbindgen_externrefs: WebAssembly.Table;
  __wbindgen_malloc(len: number, align: number): number;
  __wbindgen_free(ptr: number, len: number, align: number): void;
  __externref_table_dealloc(idx: number): void;
  __wbindgen_start(): void;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
};

let wasm: Exports | undefined;

function load(): Exports {
  if (wasm) return wasm;
  const cli = path.dirname(createRequire(import.meta.url).resolve("prisma/package.json"));
  const mod = new WebAssembly.Module(readFileSync(path.join(cli, "build", "prisma_schema_build_bg.wasm")));
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const text = (ptr: number, len: number) =>
    decoder.decode(new Uint8Array((wasm as Exports).memory.buffer, ptr >>> 0, len));
  // Import names carry a build hash (`__wbg_Error_e839…`); match them by their stable part.
  const handlers: Record<string, (...args: number[]) => unknown> = {
    Error: (ptr, len) => new Error(text(ptr, len)),
    __wbindgen_throw: (ptr, len) => {
      throw new Error(text(ptr, len));
    },
    set_message: () => undefined, // panic message registry; the thrown error is enough
    __wbindgen_init_externref_table: () => {
      const table = (wasm as Exports).__wbindgen_externrefs;
      const offset = table.grow(4);
      table.set(0, undefined);
      for (const [i, v] of [undefined, null, true, false].entries()) table.set(offset + i, v);
    },
  };
  const imports: Record<string, Record<string, (...args: number[]) => unknown>> = {};
  for (const imp of WebAssembly.Module.imports(mod)) {
    const key = imp.name.replace(/^__wbg_/, "").replace(/_[0-9a-f]{16}$/, "");
    const handler = handlers[key];
    if (!handler)
      throw new Error(`prisma_schema_build wasm wants unknown import ${imp.name}; update prisma-schema.ts`);
    imports[imp.module] = { ...imports[imp.module], [imp.name]: handler };
  }
  const instance = new WebAssembly.Instance(mod, imports);
  wasm = instance.exports as unknown as Exports;
  wasm.__wbindgen_start();
  return wasm;
}

/** Parses and validates schema text with Prisma's parser; throws with Prisma's message when invalid. */
export function parseSchema(schemaText: string): Datamodel {
  const w = load();
  const input = new TextEncoder().encode(
    JSON.stringify({ prismaSchema: [["schema.prisma", schemaText]], noColor: true }),
  );
  const ptr = w.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(w.memory.buffer, ptr, input.length).set(input);
  const [outPtr, outLen, errIdx, failed] = w.get_dmmf(ptr, input.length);
  if (failed) {
    const err = w.__wbindgen_externrefs.get(errIdx) as Error;
    w.__externref_table_dealloc(errIdx);
    let message = err.message;
    try {
      message = (JSON.parse(message) as { message: string }).message;
    } catch {}
    throw new Error(`schema.prisma is invalid: ${message}`);
  }
  const json = new TextDecoder().decode(new Uint8Array(w.memory.buffer, outPtr >>> 0, outLen));
  w.__wbindgen_free(outPtr, outLen, 1);
  return (JSON.parse(json) as { datamodel: Datamodel }).datamodel;
}
