import { z } from "zod";
import { ENV_DOCS, ZEnv } from "../../server/env";

type TProperty = {
  default?: unknown;
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
};

export const GENERATED_START = "<!-- generated from server/env.ts by `npm run docs:generate`: edit there -->";
export const GENERATED_END = "<!-- end of generated -->";

function values(p: TProperty): string {
  if (p.enum) return p.enum.map((v) => `\`${v}\``).join(" ");
  if (p.format === "uri") return "URL";
  if (p.type === "integer") {
    const max = p.maximum !== undefined && p.maximum < Number.MAX_SAFE_INTEGER ? p.maximum : undefined;
    return max === undefined ? `integer ≥ ${p.minimum}` : `integer ${p.minimum}–${max}`;
  }
  if (p.type === "number" && p.minimum !== undefined && p.maximum !== undefined)
    return `number ${p.minimum}–${p.maximum}`;
  if (p.minLength !== undefined && p.minLength > 1) return `at least ${p.minLength} characters`;
  return "text";
}

/** The table of server/env.ts's variables: the schema's types and defaults, ENV_DOCS's words. */
export function renderConfigurationTable(): string {
  const schema = z.toJSONSchema(ZEnv, { io: "input" }) as { properties: Record<string, TProperty> };
  const rows = Object.entries(schema.properties).map(([name, property]) => {
    const doc = ENV_DOCS[name as keyof typeof ENV_DOCS];
    const fallback = property.default === undefined ? "unset" : `\`${property.default}\``;
    return `| \`${name}\` | ${doc.default ?? fallback} | ${values(property)} | ${doc.description} |`;
  });
  return ["| variable | default | values | meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** The document with its generated part replaced; throws when the markers are missing. */
export function renderConfigurationDoc(current: string): string {
  const start = current.indexOf(GENERATED_START);
  const end = current.indexOf(GENERATED_END);
  if (start < 0 || end < start)
    throw new Error(`docs/configuration.md: markers missing (${GENERATED_START})`);
  return `${current.slice(0, start + GENERATED_START.length)}\n\n${renderConfigurationTable()}\n\n${current.slice(end)}`;
}
