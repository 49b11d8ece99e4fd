import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderConfigurationDoc, renderConfigurationTable } from "./configuration";

describe("docs/configuration.md", () => {
  it("states each variable's default and range as the schema has them", () => {
    const table = renderConfigurationTable();
    expect(table).toContain("| `PORT` | `3000` | integer 0–65535 | HTTP port |");
    expect(table).toContain("| `BACKGROUND_JOBS` | `on` | `on` `off` |");
    expect(table).toContain("| `ADMIN_TOKEN` | `admin_test` (not in production) | at least 8 characters |");
  });

  it("is up to date with server/env.ts (npm run docs:generate)", () => {
    const current = readFileSync("docs/configuration.md", "utf8");
    expect(renderConfigurationDoc(current)).toBe(current);
  });

  it("refuses a document without the generated part's markers", () => {
    expect(() => renderConfigurationDoc("# Configuration\n")).toThrow(/markers missing/);
  });
});
