import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findBinary, requireBinaries } from "./debian-package";

const dir = mkdtempSync(join(tmpdir(), "debian-package-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the Debian binaries of `npm run cluster`", () => {
  it("finds a binary in the given folders, and says which command installs the missing ones", () => {
    writeFileSync(join(dir, "haproxy"), "#!/bin/sh\n");
    chmodSync(join(dir, "haproxy"), 0o755);
    expect(findBinary("haproxy", [dir])).toBe(join(dir, "haproxy"));
    expect(findBinary("pgbouncer", [dir])).toBeNull();
    expect(requireBinaries(["haproxy"], { dirs: [dir], canInstall: false })).toEqual({
      haproxy: join(dir, "haproxy"),
    });
    // Not root (or no apt-get): nothing is installed, and the error names the command.
    expect(() => requireBinaries(["pgbouncer", "haproxy"], { dirs: [dir], canInstall: false })).toThrow(
      "pgbouncer not installed: run `sudo apt-get install -y pgbouncer`",
    );
  });
});
