import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { IDEMPOTENCY_DEFAULTS } from "../keys";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { providerChargesForOrder } from "../test/payments";
import {
  type Answer,
  call,
  json,
  newKey,
  type RestStack,
  restOrder,
  restPay,
  startRestStack,
} from "../test/rest-stack";

/**
 * draft-ietf-httpapi-idempotency-key-header (the Idempotency-Key HTTP header field), walked
 * section by section against the REST surface over real HTTP: the API in its own process, the
 * payment provider in another. Where this project deliberately differs from a SHOULD, the test
 * says so and names the decision record.
 */

let stack: RestStack;
let base: string;
let alice: TestAccount;
let bob: TestAccount;
const since = new Date(Date.now() - 5000);

beforeAll(async () => {
  stack = await startRestStack();
  base = stack.url;
  [alice, bob] = await Promise.all([createTestAccount("draft"), createTestAccount("draft")]);
});
afterAll(() => stack?.stop());

const visa = (orderId: string) => ({ orderId, paymentMethod: "pm_card_visa" });
const keyRows = (account: TestAccount, key: string) =>
  db().idempotencyKey.count({ where: { accountId: account.id, key } });
const paymentsOf = (orderId: string) => db().payment.count({ where: { orderId } });
const chargesOf = async (orderId: string) =>
  (await providerChargesForOrder(stack.provider.client, orderId, since)).length;

function expectProblem(answer: Answer, status: number, slug: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  const body = json(answer);
  expect(body).toMatchObject({ type: `/docs/problems#${slug}`, status });
  expect(body.title).toEqual(expect.any(String));
  expect(body.detail).toEqual(expect.any(String));
  return body;
}

describe("§2.1 Syntax: the key is a Structured Field String", () => {
  it("accepts a UUID as an sf-string and answers normally", async () => {
    const order = await restOrder(base, alice.token);
    const res = await restPay(base, alice.token, `"${newKey()}"`, visa(order.id));
    expect(res.status, res.text).toBe(200);
  });

  it("refuses a malformed sf-string, an over-long key and non-ASCII with 400 before anything is stored", async () => {
    const order = await restOrder(base, alice.token);
    for (const key of ['"unterminated', `"${"k".repeat(256)}"`, "k".repeat(256), "clé-1"]) {
      expectProblem(await restPay(base, alice.token, key, visa(order.id)), 400, "idempotency-key-invalid");
    }
    expect(await paymentsOf(order.id)).toBe(0);
  });

  it("refuses several Idempotency-Key headers with 400: a request carries exactly one key", async () => {
    const order = await restOrder(base, alice.token);
    const res = await fetch(`${base}/api/v1/payments`, {
      method: "POST",
      headers: [
        ["authorization", `Bearer ${alice.token}`],
        ["content-type", "application/json"],
        ["idempotency-key", `"${newKey()}"`],
        ["idempotency-key", `"${newKey()}"`],
      ],
      body: JSON.stringify(visa(order.id)),
    });
    expectProblem(
      { status: res.status, headers: res.headers, text: await res.text() },
      400,
      "idempotency-key-invalid",
    );
    expect(await paymentsOf(order.id)).toBe(0);
  });

  it("differs deliberately: a bare (unquoted) key is accepted too, as a key apart from the quoted one (decisions 0010, 0038)", async () => {
    const key = newKey();
    const [first, second] = [await restOrder(base, alice.token), await restOrder(base, alice.token)];
    expect((await restPay(base, alice.token, key, visa(first.id))).status).toBe(200);
    // The quoted form of the same characters is another key: not a 422 for another order.
    const quoted = await restPay(base, alice.token, `"${key}"`, visa(second.id));
    expect(quoted.status, quoted.text).toBe(200);
    expect(quoted.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("§2.2 Uniqueness of Idempotency Key (and Security Considerations: keys are scoped to the client)", () => {
  it("another account's identical key is an unrelated request: it runs, and never sees alice's response", async () => {
    const key = newKey();
    const [mine, theirs] = await Promise.all([restOrder(base, alice.token), restOrder(base, bob.token)]);
    const first = await restPay(base, alice.token, key, visa(mine.id));
    const other = await restPay(base, bob.token, key, visa(theirs.id));
    expect([first.status, other.status]).toEqual([200, 200]);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(json(other).orderId).toBe(theirs.id);
  });
});

describe("§2.3 Idempotency Key Validity and Expiry: the published policy is kept", () => {
  it("for 24 hours after completion a reused key is refused for another request; once expired, it is a new request", async () => {
    expect(IDEMPOTENCY_DEFAULTS.ttlSeconds).toBe(24 * 60 * 60);
    const key = newKey();
    const [first, second] = [await restOrder(base, alice.token), await restOrder(base, alice.token)];
    expect((await restPay(base, alice.token, key, visa(first.id))).status).toBe(200);
    const completedBy = Date.now();
    const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: alice.id, key } });
    const ttlMs = IDEMPOTENCY_DEFAULTS.ttlSeconds * 1000;
    expect(row.expiresAt.getTime()).toBeLessThanOrEqual(completedBy + ttlMs);
    expect(row.expiresAt.getTime()).toBeGreaterThan(completedBy + ttlMs - 60_000);
    expectProblem(await restPay(base, alice.token, key, visa(second.id)), 422, "idempotency-key-reused");

    // The clock is moved by moving the key's expiry into the past, as 24 hours would.
    await db().idempotencyKey.update({
      where: { id: row.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const reused = await restPay(base, alice.token, key, visa(second.id));
    expect(reused.status, reused.text).toBe(200);
    expect(reused.headers.get("idempotent-replayed")).toBeNull();
    expect(json(reused).orderId).toBe(second.id);
  });
});

describe("§2.4 Idempotency Fingerprint", () => {
  it("the same key with another payload is refused with 422 as a problem; the handler does not run", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    expect((await restPay(base, alice.token, key, visa(order.id))).status).toBe(200);
    const other = await restPay(base, alice.token, key, {
      orderId: order.id,
      paymentMethod: "pm_card_declined",
    });
    expectProblem(other, 422, "idempotency-key-reused");
    expect(await paymentsOf(order.id)).toBe(1);
  });

  it("differs deliberately: fields outside the operation (orderId, paymentMethod) are not fingerprinted, so they replay rather than 422 (decision 0002, 0038)", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const first = await restPay(base, alice.token, key, visa(order.id));
    const again = await restPay(base, alice.token, key, {
      ...visa(order.id),
      note: "retry from the runbook",
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
  });
});

describe("§2.6 Idempotency Enforcement Scenarios", () => {
  it("first request: processed normally; duplicate: the stored response, byte for byte, marked Idempotent-Replayed", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const first = await restPay(base, alice.token, key, visa(order.id));
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(json(first)).toMatchObject({ orderId: order.id, amount: order.total, status: "succeeded" });
    const again = await restPay(base, alice.token, key, visa(order.id));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await paymentsOf(order.id)).toBe(1);
  });

  it("duplicate of an error: a declined card's 402 problem is stored and replayed with the same status and body", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const declined = { orderId: order.id, paymentMethod: "pm_card_declined" };
    const first = await restPay(base, alice.token, key, declined);
    const problem = expectProblem(first, 402, "card-declined");
    expect(problem).toMatchObject({ paymentId: expect.any(String), declineCode: expect.any(String) });
    const again = await restPay(base, alice.token, key, declined);
    expect(again.status).toBe(402);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe("application/problem+json");
    expect(again.text).toBe(first.text);
    expect(await paymentsOf(order.id)).toBe(1);
  });

  it("concurrent request: 409 problem with Retry-After while the first (pm_card_slow) is in flight; it runs once", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const slow = { orderId: order.id, paymentMethod: "pm_card_slow" };
    const firstP = restPay(base, alice.token, key, slow);
    await new Promise((r) => setTimeout(r, 300));
    const duplicate = await restPay(base, alice.token, key, slow);
    const first = await firstP;
    // Whichever claimed the key first ran; the other was told to come back.
    const [winner, loser] = first.status === 200 ? [first, duplicate] : [duplicate, first];
    expect(winner.status, winner.text).toBe(200);
    expectProblem(loser, 409, "idempotency-key-in-use");
    expect(Number(loser.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const later = await restPay(base, alice.token, key, slow);
    expect(later.headers.get("idempotent-replayed")).toBe("true");
    expect(later.text).toBe(winner.text);
    expect(await paymentsOf(order.id)).toBe(1);
    expect(await chargesOf(order.id)).toBe(1);
  });

  it("differs deliberately: a 5xx is not stored; the retry with the same key runs again and charges once (decision 0002, 0038)", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const failed = await restPay(base, alice.token, key, visa(order.id), { "x-provider-fault": "error=500" });
    expectProblem(failed, 503, "provider-unavailable");
    const retry = await restPay(base, alice.token, key, visa(order.id));
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await paymentsOf(order.id)).toBe(1);
    expect(await chargesOf(order.id)).toBe(1);
  });
});

describe("§2.7 Error Scenarios: problem details (RFC 9457) that point at their documentation", () => {
  it("a missing key is a 400 problem whose type links the documentation; nothing is stored, even unauthenticated", async () => {
    const order = await restOrder(base, alice.token);
    const missing = expectProblem(
      await restPay(base, alice.token, undefined, visa(order.id)),
      400,
      "idempotency-key-missing",
    );
    expect(missing.detail).toMatch(/Idempotency-Key/);
    expectProblem(
      await restPay(base, "sk_test_nobody", undefined, visa(order.id)),
      400,
      "idempotency-key-missing",
    );
    expect(await paymentsOf(order.id)).toBe(0);
    expect(
      await db().idempotencyKey.count({
        where: { accountId: alice.id, requestParams: { equals: visa(order.id) } },
      }),
    ).toBe(0);
  });

  it("the same key is refused with 422, and its problem names the reuse", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    await restPay(base, alice.token, key, visa(order.id));
    const reused = expectProblem(
      await restPay(base, alice.token, key, {
        orderId: (await restOrder(base, alice.token)).id,
        paymentMethod: "pm_card_visa",
      }),
      422,
      "idempotency-key-reused",
    );
    expect(reused.title).toBe("Idempotency-Key is already used");
    expect(await keyRows(alice, key)).toBe(1);
  });
});

describe("§2.5 Responsibilities: the resource publishes its idempotency specification, expiry included", () => {
  it("the OpenAPI document served over HTTP requires the header, states the 24-hour expiry and declares 400, 409 + Retry-After, 422", async () => {
    const res = await call(base, "GET", "/api/openapi.json");
    expect(res.status).toBe(200);
    const doc = json(res) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const op = doc.paths["/payments"]?.post as {
      description: string;
      parameters: { in: string; name: string; required: boolean }[];
      responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
    };
    expect(op.parameters).toContainEqual(
      expect.objectContaining({ in: "header", name: "Idempotency-Key", required: true }),
    );
    expect(op.description).toContain("24 hours");
    for (const status of ["400", "409", "422"])
      expect(op.responses[status]?.content).toHaveProperty(["application/problem+json"]);
    expect(op.responses["409"]?.headers).toHaveProperty("Retry-After");
    expect(op.responses["200"]?.headers).toHaveProperty("Idempotent-Replayed");
  });

  it("docs/api.md publishes the same expiry", async () => {
    const doc = await readFile(new URL("../../docs/api.md", import.meta.url), "utf8");
    expect(doc).toMatch(/expiry \(TTL\)\s*\|\s*\*\*24 hours\*\*/);
  });
});
