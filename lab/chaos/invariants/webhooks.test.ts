import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { Journal } from "../journal";
import type { ReceiverRecord } from "../receiver-records";
import type { BookedEndpoint, BookedMessage, WebhookBooks } from "../webhook-books";
import { evidenceOf } from "./fixtures";
import type { Evidence } from "./types";
import { webhooksDelivered } from "./webhooks-delivered";
import { webhooksNotAfterDisable } from "./webhooks-not-after-disable";
import { webhooksNotForbidden } from "./webhooks-not-forbidden";
import { webhooksSigned } from "./webhooks-signed";

const T0 = Date.parse("2026-12-05T00:00:00.000Z");
const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW = "whsec_bm90IHRoZSBvbGQgb25lLCBhIG5ldyBvbmUh";
const body = JSON.stringify({ type: "payment.succeeded", timestamp: "2026-12-05T00:00:00.000Z", data: {} });

const endpoint = (more: Partial<BookedEndpoint> = {}): BookedEndpoint => ({
  id: "e1",
  accountId: "a1",
  url: "http://127.0.0.1:1/hooks/steady",
  eventTypes: ["payment.succeeded", "payment.failed"],
  createdAt: T0,
  disabledAt: null,
  disabledReason: null,
  deletedAt: null,
  ...more,
});
const message = (more: Partial<BookedMessage> = {}): BookedMessage => ({
  id: "msg_1",
  endpointId: "e1",
  eventId: "payment.succeeded:p1",
  eventType: "payment.succeeded",
  status: "succeeded",
  attempts: 1,
  nextAttemptAt: T0 + 1000,
  answers: [204],
  ...more,
});

/** A request as the steady receiver records it, signed with `secret` at `startMs`. */
function request(more: {
  id?: string;
  startMs?: number;
  secret?: string;
  receiver?: string;
  status?: number | null;
}) {
  const id = more.id ?? "msg_1";
  const startMs = more.startMs ?? T0 + 1000;
  return {
    kind: "request",
    receiver: more.receiver ?? "steady",
    path: `/hooks/${more.receiver ?? "steady"}`,
    host: "127.0.0.1:1",
    localAddress: "127.0.0.1",
    receivedAt: startMs + 20,
    id,
    timestamp: String(Math.floor(startMs / 1000)),
    signature: new Webhook(more.secret ?? OLD).sign(id, new Date(startMs), body),
    body,
    status: more.status === undefined ? 204 : more.status,
  } satisfies ReceiverRecord;
}

function evidence(
  webhooks: Partial<WebhookBooks>,
  records: ReceiverRecord[],
  setUp?: (j: Journal) => void,
): Evidence {
  const journal = new Journal();
  const m = journal.merchants;
  m.endpoints.push({
    name: "steady",
    id: "e1",
    accountId: "a1",
    url: "http://127.0.0.1:1/hooks/steady",
    forbidden: false,
  });
  m.secrets.push({
    endpointId: "e1",
    secret: OLD,
    sentAt: T0 - 100,
    answeredAt: T0 - 50,
    overlapSeconds: null,
    tries: 1,
  });
  m.records = records;
  setUp?.(journal);
  return evidenceOf(
    {
      webhooks: {
        endpoints: [endpoint()],
        messages: [message()],
        events: [
          { id: "payment.succeeded:p1", topic: "payment.succeeded", accountId: "a1", createdAt: T0 + 500 },
        ],
        ...webhooks,
      },
      readAt: T0 + 120_000,
    },
    journal,
  );
}

const details = (vs: { detail: string }[]) => vs.map((v) => v.detail);

describe("the merchant webhook invariants", () => {
  it("hold for a run where every event was delivered, signed, to enabled endpoints only", () => {
    const e = evidence({}, [request({})]);
    for (const i of [webhooksDelivered, webhooksSigned, webhooksNotAfterDisable, webhooksNotForbidden])
      expect(i.check(e), i.name).toEqual([]);
  });

  it("find an event with no message, a message marked delivered without a 2xx, and one nobody tries", () => {
    const lost = evidence({ messages: [] }, []);
    expect(details(webhooksDelivered.check(lost))).toEqual([
      expect.stringMatching(/event payment\.succeeded:p1 .* has no message/),
    ]);
    const unanswered = evidence({}, [request({ status: null })]);
    expect(details(webhooksDelivered.check(unanswered))).toEqual([
      expect.stringMatching(/msg_1 .* marked delivered .* no receiver answered it 2xx/),
    ]);
    const held = evidence({}, [
      request({ status: null }),
      { kind: "answer", receiver: "steady", id: "msg_1", at: T0 + 2000, status: 204 },
    ]);
    expect(webhooksDelivered.check(held)).toEqual([]);
    const stuck = evidence(
      { messages: [message({ status: "pending", answers: [500], nextAttemptAt: T0 })] },
      [],
    );
    expect(details(webhooksDelivered.check(stuck))).toEqual([
      expect.stringMatching(/pending .* nobody is trying it/),
    ]);
    const failing = evidence({ messages: [message({ status: "failed", answers: [500, 500] })] }, []);
    expect(webhooksDelivered.check(failing)).toEqual([]);
  });

  it("find a delivery signed with a secret the merchant no longer holds after a rotation", () => {
    const rotated = (j: Journal) =>
      j.merchants.secrets.push({
        endpointId: "e1",
        secret: NEW,
        sentAt: T0 + 10_000,
        answeredAt: T0 + 10_200,
        overlapSeconds: 0,
        tries: 1,
      });
    // Before the rotation: the old secret; after it: the new one (also alone); during it: either.
    const good = evidence(
      {},
      [
        request({ startMs: T0 + 5000 }),
        request({ id: "msg_2", startMs: T0 + 20_000, secret: NEW }),
        request({ id: "msg_3", startMs: T0 + 10_000 }),
      ],
      rotated,
    );
    expect(webhooksSigned.check(good)).toEqual([]);
    const stale = evidence({}, [request({ startMs: T0 + 20_000, secret: OLD })], rotated);
    expect(details(webhooksSigned.check(stale))).toEqual([
      expect.stringMatching(/does not verify .* overlap 0 s/),
    ]);
    const tampered = evidence({}, [{ ...request({}), body: body.replace("succeeded", "failed") }]);
    expect(webhooksSigned.check(tampered)).toHaveLength(1);
    const unsigned = evidence({}, [{ ...request({}), signature: null }]);
    expect(details(webhooksSigned.check(unsigned))).toEqual([expect.stringMatching(/lacks/)]);
  });

  it("find an attempt started after the merchant's disable answered, or after the app's own 410", () => {
    const disabled = (j: Journal) =>
      j.merchants.changes.push({
        endpointId: "e1",
        kind: "disabled",
        sentAt: T0 + 9_000,
        answeredAt: T0 + 10_000,
      });
    const before = evidence({}, [request({ startMs: T0 + 9_500 })], disabled);
    expect(webhooksNotAfterDisable.check(before)).toEqual([]);
    const after = evidence({}, [request({ startMs: T0 + 11_000 })], disabled);
    expect(details(webhooksNotAfterDisable.check(after))).toEqual([
      expect.stringMatching(/after the endpoint was disabled by the merchant/),
    ]);
    const gone = { endpoints: [endpoint({ disabledAt: T0 + 10_000, disabledReason: "gone" })] };
    expect(webhooksNotAfterDisable.check(evidence(gone, [request({ startMs: T0 + 12_000 })]))).toEqual([]);
    expect(
      details(webhooksNotAfterDisable.check(evidence(gone, [request({ startMs: T0 + 30_000 })]))),
    ).toEqual([expect.stringMatching(/disabled \(gone\)/)]);
  });

  it("find anything that reached the forbidden receiver, answered a forbidden endpoint, or a forbidden URL registered", () => {
    const forbidden = (j: Journal) => {
      j.merchants.endpoints.push({
        name: "forbidden-0",
        id: "e9",
        accountId: "a1",
        url: "http://0.0.0.0:2/hooks/forbidden",
        forbidden: true,
      });
      j.merchants.forbiddenRegistrations.push({
        url: "http://10.0.0.1/hooks",
        status: 400,
        reason: "bad-request",
      });
    };
    const refused = evidence(
      {
        messages: [
          message(),
          message({ id: "msg_9", endpointId: "e9", status: "failed", answers: [null, null] }),
        ],
      },
      [request({})],
      forbidden,
    );
    expect(webhooksNotForbidden.check(refused)).toEqual([]);
    const reached = evidence(
      { messages: [message(), message({ id: "msg_9", endpointId: "e9", answers: [null, 204] })] },
      [request({}), { ...request({ id: "msg_9", receiver: "forbidden" }), localAddress: "::ffff:192.0.2.2" }],
      (j) => {
        forbidden(j);
        j.merchants.forbiddenRegistrations.push({
          url: "http://169.254.169.254/",
          status: 201,
          reason: null,
        });
      },
    );
    expect(details(webhooksNotForbidden.check(reached))).toEqual([
      expect.stringMatching(/msg_9 to forbidden .* reached ::ffff:192\.0\.2\.2/),
      expect.stringMatching(/msg_9 to http:\/\/0\.0\.0\.0:2.* got an HTTP answer/),
      expect.stringMatching(/registered http:\/\/169\.254\.169\.254/),
    ]);
  });
});
