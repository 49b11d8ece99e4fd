import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLIENT_TYPES_PATH, generateClientTypes } from "./lib/client-types";

describe("npm run generate:client", () => {
  it("has been run: the client's committed types are what the OpenAPI document generates now", async () => {
    const committed = readFileSync(CLIENT_TYPES_PATH, "utf8");
    // Compared as text, so the failure shows the diff; run `npm run generate:client` to fix it.
    expect(committed).toBe(await generateClientTypes());
  });
});
