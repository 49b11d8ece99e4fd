import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../db";
import { consume, LIMIT_RULES, reset } from "../limits";
import { INCORRECT_CREDENTIALS, signIn, signUp } from "./accounts";

const PASSWORD = "a passphrase long enough";

/** A documentation-range address of its own per test, so reruns on one database start clean. */
function anyAddress(): string {
  return `2001:db8::${randomBytes(4)
    .toString("hex")
    .replace(/(....)(....)/, "$1:$2")}`;
}

function visitor(address: string) {
  return new Headers({ "x-forwarded-for": address });
}

async function newShopper(address: string) {
  const email = `shopper-${randomBytes(6).toString("hex")}@example.test`;
  expect(await signUp(visitor(address), { email, password: PASSWORD })).toEqual({ ok: true });
  return email;
}

describe("accounts", () => {
  it("store a memory-hard (scrypt) hash, never the password", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const credential = await db().credential.findFirst({ where: { account: { email } } });
    expect(credential?.password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(credential?.password).not.toContain(PASSWORD);
  });

  it("refuse a second account for the same email, in any case", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const again = await signUp(visitor(address), { email: email.toUpperCase(), password: PASSWORD });
    expect(again).toMatchObject({ ok: false, message: expect.stringContaining("already exists") });
  });

  it("answer a wrong password and an unknown email alike", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const headers = visitor(address);
    expect(await signIn(headers, { email, password: "wrong password" })).toEqual({
      ok: false,
      message: INCORRECT_CREDENTIALS,
    });
    expect(await signIn(headers, { email: `nobody-${email}`, password: PASSWORD })).toEqual({
      ok: false,
      message: INCORRECT_CREDENTIALS,
    });
    expect(await signIn(headers, { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("throttle an email after 10 wrong passwords, from any address, the right one included", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    for (let i = 0; i < 10; i++) {
      const outcome = await signIn(visitor(anyAddress()), { email, password: `wrong ${i}` });
      expect(outcome, `attempt ${i + 1}`).toEqual({ ok: false, message: INCORRECT_CREDENTIALS });
    }
    for (const password of ["wrong again", PASSWORD]) {
      const outcome = await signIn(visitor(anyAddress()), { email, password });
      expect(outcome).toMatchObject({ ok: false, message: expect.stringMatching(/^Too many attempts/) });
      if (!outcome.ok) expect(outcome.retryAfterSeconds).toBeGreaterThan(14 * 60);
    }
  });

  it("clear an email's failures when the right password comes before the limit", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const headers = visitor(address);
    for (let i = 0; i < 9; i++) await signIn(headers, { email, password: `wrong ${i}` });
    expect(await signIn(headers, { email, password: PASSWORD })).toEqual({ ok: true });
    for (let i = 0; i < 9; i++) await signIn(headers, { email, password: `wrong ${i}` });
    expect(await signIn(headers, { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("throttle an address after 50 wrong passwords, whatever the emails", async () => {
    const address = anyAddress();
    const headers = visitor(address);
    // 49 attempts counted as sign-in counts them (a password check each would take ~20 s), then
    // the 50th through sign-in itself.
    const rule = LIMIT_RULES.signInFailuresByAddress;
    await reset(rule, address);
    for (let i = 0; i < rule.points - 1; i++) await consume(rule, address);
    expect(await signIn(headers, { email: "sprayed@example.test", password: "Winter2026!" })).toEqual({
      ok: false,
      message: INCORRECT_CREDENTIALS,
    });
    const other = anyAddress();
    const email = await newShopper(other);
    expect(await signIn(headers, { email, password: PASSWORD })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Too many attempts/),
    });
    // Another address is not affected.
    expect(await signIn(visitor(other), { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("let no more than 10 of a burst of parallel guesses reach the password check", async () => {
    const email = await newShopper(anyAddress());
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, (_, i) => signIn(visitor(anyAddress()), { email, password: `guess ${i}` })),
    );
    const checked = outcomes.filter((o) => !o.ok && o.message === INCORRECT_CREDENTIALS);
    expect(checked).toHaveLength(10);
    expect(outcomes.filter((o) => !o.ok && o.message.startsWith("Too many attempts"))).toHaveLength(15);
  });
});
