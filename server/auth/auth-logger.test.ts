import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../log";
import { betterAuthLogger } from "./auth-logger";

describe("better-auth's logs", () => {
  it("go through pino as JSON lines, with the app's redaction of secrets (warnings here: errors fail a test)", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = betterAuthLogger(createLogger({ level: "info", format: "json", destination }));
    log.log("warn", "sign-in failed", { password: "hunter2hunter2", token: "sk_live_x", email: "a@b.test" });
    log.log("warn", "adapter error", new Error("boom"), "extra");
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 40,
      component: "better-auth",
      msg: "sign-in failed",
      password: "[redacted]",
      token: "[redacted]",
    });
    expect(lines[0]).not.toContain("hunter2");
    expect(second).toMatchObject({ msg: "adapter error", err: { message: "boom" }, details: ["extra"] });
  });
});
