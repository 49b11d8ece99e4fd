import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { env } from "../env";
import { createApiServer } from "../http/node-server";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { ensureEffectsTable, runs, testRouter } from "../test/idempotent-router";

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

let server: Server;
let base: string;
let alice: TestAccount;

beforeAll(async () => {
  await ensureEffectsTable(db());
  alice = await createTestAccount("http");
  server = createApiServer(testRouter);
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/trpc`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});

async function post(
  path: string,
  body: BodyInit,
  headers: Record<string, string | undefined>,
  init: RequestInit = {},
): Promise<Answer> {
  const res = await fetch(`${base}/${path}`, {
    method: "POST",
    headers: Object.fromEntries(
      Object.entries({ "content-type": "application/json", ...headers }).filter(
        (h): h is [string, string] => h[1] !== undefined,
      ),
    ),
    body,
    ...init,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const asAlice = (key: string | undefined) => ({
  authorization: `Bearer ${alice.token}`,
  "idempotency-key": key,
});
const effect = (key: string | undefined, input: Record<string, unknown>) =>
  post("effect", JSON.stringify(input), asAlice(key));

const runsOf = (account: TestAccount, key: string) => runs.get(`${account.id}/${key}`) ?? 0;
const keyRows = (account: TestAccount, key: string) =>
  db().idempotencyKey.count({ where: { accountId: account.id, key } });
const trpcCode = (a: Answer) =>
  (JSON.parse(a.text) as { error?: { data?: { code?: string } } }).error?.data?.code;

describe("concurrent duplicates over HTTP", () => {
  it("20 identical POSTs run the handler once: one 200, the rest 409 + Retry-After or a byte-identical replay, 20 times over", async () => {
    const tally = { conflicts: 0, replays: 0 };
    for (let round = 0; round < 20; round++) {
      const key = randomUUID();
      const body = JSON.stringify({ amount: 700, note: `http round ${round}`, sleepMs: 300 });
      // Ten at once, ten more spread over the handler's 300 ms and past its end, so that the
      // run sees both duplicates in flight (409) and duplicates after completion (replays).
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          if (i >= 10) await new Promise((r) => setTimeout(r, (i - 9) * 40));
          return post("effect", body, asAlice(key));
        }),
      );

      expect(runsOf(alice, key)).toBe(1);
      const fresh = answers.filter((a) => a.status === 200 && !a.headers.has("idempotent-replayed"));
      expect(fresh).toHaveLength(1);
      const first = fresh[0] as Answer;
      expect(JSON.parse(first.text)).toMatchObject({
        result: { data: { amount: 700, note: `http round ${round}` } },
      });
      for (const a of answers) {
        if (a === first) continue;
        if (a.status === 409) {
          expect(Number(a.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
          expect(trpcCode(a)).toBe("CONFLICT");
          tally.conflicts++;
        } else {
          expect(a.status).toBe(200);
          expect(a.headers.get("idempotent-replayed")).toBe("true");
          expect(a.text).toBe(first.text);
          tally.replays++;
        }
      }
      // Once settled, a retry is a replay of exactly the first answer.
      const late = await post("effect", body, asAlice(key));
      expect([late.status, late.headers.get("idempotent-replayed"), late.text]).toEqual([
        200,
        "true",
        first.text,
      ]);
    }
    const effects = await db().$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM idem_test_effects WHERE account_id = ${alice.id}::uuid AND key IN (
        SELECT key FROM idempotency_keys WHERE account_id = ${alice.id}::uuid AND request_params->>'note' LIKE 'http round %')`;
    expect(Number(effects[0]?.n)).toBe(20);
    expect(tally.conflicts).toBeGreaterThan(0);
    expect(tally.replays).toBeGreaterThan(0);
    console.info(`[http] 20 rounds × 20 POSTs: ${tally.conflicts} answered 409, ${tally.replays} replayed`);
  }, 60_000);
});

describe("the contract over HTTP", () => {
  it("a missing key is 400, even without authentication, and stores nothing", async () => {
    const before = await db().idempotencyKey.count({ where: { accountId: alice.id } });
    const noKey = await effect(undefined, { amount: 1, note: "x" });
    expect([noKey.status, trpcCode(noKey)]).toEqual([400, "BAD_REQUEST"]);
    expect(noKey.text).toMatch(/Idempotency-Key header is required/);

    const anonymous = await post("effect", JSON.stringify({ amount: 1, note: "x" }), {});
    expect([anonymous.status, trpcCode(anonymous)]).toEqual([400, "BAD_REQUEST"]);
    // With a key, the same anonymous call gets as far as authentication.
    const keyOnly = await post("effect", JSON.stringify({ amount: 1, note: "x" }), {
      "idempotency-key": randomUUID(),
    });
    expect(keyOnly.status).toBe(401);
    expect(await db().idempotencyKey.count({ where: { accountId: alice.id } })).toBe(before);
  });

  it("a 256-character key is 400; a 255-character one is served", async () => {
    const long = await effect("k".repeat(256), { amount: 1, note: "x" });
    expect([long.status, trpcCode(long)]).toEqual([400, "BAD_REQUEST"]);
    expect(await keyRows(alice, "k".repeat(256))).toBe(0);
    const key = `${randomUUID()}-`.padEnd(255, "k");
    expect((await effect(key, { amount: 1, note: "x" })).status).toBe(200);
  });

  it("a body over the cap is 413 before anything runs, whether announced or streamed; one at the cap is served", async () => {
    const cap = env.IDEMPOTENCY_MAX_BODY_BYTES;
    const sized = (bytes: number) => {
      const shell = JSON.stringify({ amount: 1, note: "" });
      return JSON.stringify({ amount: 1, note: "n".repeat(bytes - shell.length) });
    };
    const announced = randomUUID();
    const big = await post("effect", sized(cap + 1), asAlice(announced));
    expect([big.status, trpcCode(big)]).toEqual([413, "PAYLOAD_TOO_LARGE"]);

    const streamed = randomUUID();
    const chunks = [sized(cap + 1).slice(0, cap / 2), sized(cap + 1).slice(cap / 2)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    const chunked = await post("effect", stream, asAlice(streamed), { duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);

    for (const key of [announced, streamed]) {
      expect(await keyRows(alice, key)).toBe(0);
      expect(runsOf(alice, key)).toBe(0);
    }
    const atCap = randomUUID();
    expect(new TextEncoder().encode(sized(cap)).byteLength).toBe(cap);
    expect((await post("effect", sized(cap), asAlice(atCap))).status).toBe(200);
    expect(runsOf(alice, atCap)).toBe(1);
  });

  it("refuses a batch that contains an idempotent procedure, and runs nothing", async () => {
    const key = randomUUID();
    const input = { amount: 1, note: "batched" };
    for (const paths of ["effect,effect", "effect,plain"]) {
      const batch = await post(`${paths}?batch=1`, JSON.stringify({ 0: input, 1: input }), asAlice(key));
      expect([batch.status, trpcCode(batch)]).toEqual([400, "BAD_REQUEST"]);
      expect(batch.text).toMatch(/cannot be batched/);
    }
    expect(await keyRows(alice, key)).toBe(0);
    expect(runsOf(alice, key)).toBe(0);
  });

  it("the same key with another body is 422 and never runs the handler", async () => {
    const key = randomUUID();
    expect((await effect(key, { amount: 100, note: "first" })).status).toBe(200);
    const other = await effect(key, { amount: 101, note: "first" });
    expect([other.status, trpcCode(other)]).toEqual([422, "UNPROCESSABLE_CONTENT"]);
    expect(other.headers.has("idempotent-replayed")).toBe(false);
    expect(runsOf(alice, key)).toBe(1);
  });

  it("another JSON text of the same request is a replay, not a 422", async () => {
    const key = randomUUID();
    const first = await post("effect", '{"amount":100,"note":"café"}', asAlice(key));
    const again = await post(
      "effect",
      '{\n  "traceId": "t-2",\n  "note" : "cafe\\u0301",\n  "amount" : 100.0\n}',
      asAlice(key),
    );
    expect([again.status, again.headers.get("idempotent-replayed"), again.text]).toEqual([
      200,
      "true",
      first.text,
    ]);
    expect(runsOf(alice, key)).toBe(1);
  });

  it("a stored 402 is replayed with the same status and the same body text", async () => {
    const key = randomUUID();
    const input = { amount: 9, note: "declined", fail: "business" };
    const first = await effect(key, input);
    const again = await effect(key, input);
    expect([first.status, trpcCode(first)]).toEqual([402, "PAYMENT_REQUIRED"]);
    expect(first.headers.has("idempotent-replayed")).toBe(false);
    expect([again.status, again.headers.get("idempotent-replayed"), again.text]).toEqual([
      402,
      "true",
      first.text,
    ]);
    expect(runsOf(alice, key)).toBe(1);
  });
});
