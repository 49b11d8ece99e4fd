import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../db";
import { consume, LIMIT_RULES, reset } from "../limits";
import { OPERATORS_ACCOUNT } from "../refunds";
import {
  type AuthOutcome,
  FREE_SIGN_IN_FAILURES,
  INCORRECT_CREDENTIALS,
  signIn,
  signInDelaySeconds,
  signUp,
} from "./accounts";
import { addressGroup } from "./client-address";
import { isReservedEmail, RESERVED_EMAIL_MESSAGE } from "./reserved";

const PASSWORD = "a passphrase long enough";

/**
 * A documentation-range address in a /64 of its own per test (limits count IPv6 by /64), so
 * reruns on one database start clean.
 */
function anyAddress(): string {
  return `2001:db8:${randomBytes(4)
    .toString("hex")
    .replace(/(....)(....)/, "$1:$2")}::1`;
}

const messageOf = (o: AuthOutcome) => (o.ok ? "" : o.message);

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

  it("answer a sign-up for an existing email exactly as for a new one, and keep the owner's password", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const again = await signUp(visitor(address), {
      email: email.toUpperCase(),
      password: "the attacker's guess",
    });
    const fresh = await signUp(visitor(address), {
      email: `fresh-${randomBytes(6).toString("hex")}@example.test`,
      password: "the attacker's guess",
    });
    expect(again).toEqual({ ok: true });
    expect(fresh).toEqual(again);
    expect(await db().account.count({ where: { email } })).toBe(1);
    expect(await signIn(visitor(address), { email, password: "the attacker's guess" })).toMatchObject({
      ok: false,
    });
    expect(await signIn(visitor(address), { email, password: PASSWORD })).toEqual({ ok: true });
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

  it("wait longer after each wrong password past three, for that email and address only", async () => {
    expect([1, 2, 3, 4, 5, 6, 10, 13, 40].map(signInDelaySeconds)).toEqual([0, 0, 0, 2, 4, 8, 128, 900, 900]);
    const attacker = anyAddress();
    const email = await newShopper(anyAddress());
    for (let i = 0; i < FREE_SIGN_IN_FAILURES + 1; i++) {
      const outcome = await signIn(visitor(attacker), { email, password: `wrong ${i}` });
      expect(outcome, `attempt ${i + 1}`).toEqual({ ok: false, message: INCORRECT_CREDENTIALS });
    }
    // The fourth failure imposed 2 s on this pair: even the right password waits.
    for (const password of ["wrong again", PASSWORD]) {
      const outcome = await signIn(visitor(attacker), { email, password });
      expect(outcome).toMatchObject({
        ok: false,
        message: expect.stringMatching(/^Too many attempts\. Try again in [12] seconds?\.$/),
      });
    }
    // The owner, from their own address, is not locked out by the attacker.
    expect(await signIn(visitor(anyAddress()), { email, password: PASSWORD })).toEqual({ ok: true });
    // And the wait ends: after it, the pair may try again.
    await new Promise((r) => setTimeout(r, 2100));
    expect(await signIn(visitor(attacker), { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("keep no hard lock per email: dozens of failures from many addresses leave the owner free", async () => {
    const email = await newShopper(anyAddress());
    for (let i = 0; i < 30; i++) await signIn(visitor(anyAddress()), { email, password: `spray ${i}` });
    expect(await signIn(visitor(anyAddress()), { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("clear a pair's failures when the right password comes", async () => {
    const address = anyAddress();
    const email = await newShopper(address);
    const headers = visitor(address);
    for (let i = 0; i < FREE_SIGN_IN_FAILURES; i++) await signIn(headers, { email, password: `wrong ${i}` });
    expect(await signIn(headers, { email, password: PASSWORD })).toEqual({ ok: true });
    for (let i = 0; i < FREE_SIGN_IN_FAILURES; i++) await signIn(headers, { email, password: `wrong ${i}` });
    expect(await signIn(headers, { email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("throttle an address after 50 wrong passwords, whatever the emails", async () => {
    const address = anyAddress();
    const headers = visitor(address);
    // 49 attempts counted as sign-in counts them (a password check each would take ~20 s), then
    // the 50th through sign-in itself.
    const rule = LIMIT_RULES.signInFailuresByAddress;
    await reset(rule, addressGroup(address));
    for (let i = 0; i < rule.points - 1; i++) await consume(rule, addressGroup(address));
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

  it("count a burst of parallel wrong passwords as a sequence: exactly the sequential budget is checked", async () => {
    const email = await newShopper(anyAddress());
    const tries = (address: string) =>
      Array.from({ length: 20 }, (_, i) => ({
        headers: visitor(address),
        input: { email, password: `guess ${i}` },
      }));
    const checked = (outcomes: AuthOutcome[]) =>
      outcomes.filter((o) => messageOf(o) === INCORRECT_CREDENTIALS).length;
    const sequential = [];
    for (const t of tries(anyAddress())) sequential.push(await signIn(t.headers, t.input));
    const parallel = await Promise.all(tries(anyAddress()).map((t) => signIn(t.headers, t.input)));
    // Three free failures, the fourth earns the first wait: four passwords checked, either way.
    expect(checked(sequential)).toBe(FREE_SIGN_IN_FAILURES + 1);
    expect(checked(parallel)).toBe(FREE_SIGN_IN_FAILURES + 1);
    expect(parallel.filter((o) => /^Too many attempts/.test(messageOf(o)))).toHaveLength(
      20 - FREE_SIGN_IN_FAILURES - 1,
    );
  });

  it("count an IPv6 address by its /64: rotating within the block buys no tries", async () => {
    const email = await newShopper(anyAddress());
    const block = anyAddress().replace(/::1$/, "");
    const outcomes = [];
    for (let i = 0; i < 6; i++)
      outcomes.push(
        await signIn(visitor(`${block}:${i + 1}:0:0:${i + 7}`), { email, password: `guess ${i}` }),
      );
    expect(outcomes.map((o) => messageOf(o) === INCORRECT_CREDENTIALS)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("refuse to register a reserved address: the operators' own, any .invalid one, the deployment's domains", async () => {
    const address = anyAddress();
    for (const email of [OPERATORS_ACCOUNT.email, "someone@shop.invalid", "root@mail.localhost"])
      expect(await signUp(visitor(address), { email, password: PASSWORD }), email).toEqual({
        ok: false,
        message: RESERVED_EMAIL_MESSAGE,
      });
    expect(isReservedEmail("ops@shop.example.com", ["example.com"])).toBe(true);
    expect(isReservedEmail("ops@notexample.com", ["example.com"])).toBe(false);
    // The operators' account was made by a migration, before anyone could sign up.
    const operators = await db().account.findUnique({ where: { email: OPERATORS_ACCOUNT.email } });
    expect(operators?.id).toBe(OPERATORS_ACCOUNT.id);
  });
});
