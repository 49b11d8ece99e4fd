import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { createLogger, errorField } from ".";

it("censors secrets in fields it is handed by mistake, and logs an error without its extras", () => {
  let out = "";
  const log = createLogger({
    level: "info",
    format: "json",
    destination: new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    }),
  });
  const error = Object.assign(new Error("query failed"), { meta: { params: ["4242 4242 4242 4242"] } });
  log.info({
    headers: {
      authorization: "Bearer sk_live_secret",
      cookie: "checkout_session=abc",
      "idempotency-key": "k-1",
    },
    token: "sk_test_token",
    account: { password: "hunter2" },
    err: errorField(error),
  });
  const line = JSON.parse(out);
  expect(line.headers).toEqual({
    authorization: "[redacted]",
    cookie: "[redacted]",
    "idempotency-key": "[redacted]",
  });
  expect([line.token, line.account.password, line.err.message]).toEqual([
    "[redacted]",
    "[redacted]",
    "query failed",
  ]);
  expect(out).not.toMatch(/sk_live_secret|checkout_session=abc|k-1|sk_test_token|hunter2|4242/);
});
