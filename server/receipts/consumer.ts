import type { Db } from "../db";
import { failpoint } from "../failpoints";
import { type Delivery, type MessageTransport, type Poller, QUEUES, startPoller, ZEnvelope } from "../outbox";
import { type IssueOutcome, issueReceipts, type ReceiptRequest, receiptRequest } from "./issue";
import { issueRefundReceipt, type RefundReceiptRequest, refundReceiptRequest } from "./refund-receipts";

export interface ConsumerOptions {
  batchSize?: number;
  idleMs?: number;
}
export const CONSUMER_DEFAULTS = { batchSize: 50, idleMs: 500 } as const;

export interface ConsumePass {
  delivered: number;
  issued: number;
  duplicates: number;
  /** Not a topic this service acts on: acknowledged, no effect. */
  ignored: number;
  rejected: number;
  more: boolean;
}

/**
 * One pass of the receipts service: takes deliveries from its queue, issues their receipts in one
 * statement, then acknowledges them. A crash between the two leaves deliveries unacknowledged;
 * they come back after the ack timeout, and issueReceipts recognises their message ids.
 */
export async function consumeReceipts(
  deps: { prisma: Db; transport: MessageTransport },
  opts: ConsumerOptions = {},
): Promise<ConsumePass> {
  const { batchSize } = { ...CONSUMER_DEFAULTS, ...opts };
  const deliveries = await deps.transport.receive(QUEUES.receipts, batchSize);
  const pass: ConsumePass = {
    delivered: deliveries.length,
    issued: 0,
    duplicates: 0,
    ignored: 0,
    rejected: 0,
    more: false,
  };
  // Acknowledged together at the end of the pass, in one statement: a crash before it brings
  // the batch back, and each message's id makes its second delivery a no-op.
  const handled: Delivery[] = [];
  const reject = async (delivery: Delivery, error: unknown) => {
    pass.rejected++;
    // If even this fails, the ack timeout brings the delivery back.
    await deps.transport.reject(delivery, error).catch(() => undefined);
  };
  const receipts: { delivery: Delivery; request: ReceiptRequest }[] = [];
  const refunds: { delivery: Delivery; request: RefundReceiptRequest }[] = [];
  for (const delivery of deliveries) {
    try {
      const envelope = ZEnvelope.parse(delivery.data);
      // payment.succeeded and refund.succeeded are routed here; anything else is acknowledged and ignored.
      if (envelope.topic === "payment.succeeded")
        receipts.push({ delivery, request: receiptRequest(envelope) });
      else if (envelope.topic === "refund.succeeded")
        refunds.push({ delivery, request: refundReceiptRequest(envelope) });
      else {
        pass.ignored++;
        handled.push(delivery);
      }
    } catch (error) {
      await reject(delivery, error);
    }
  }
  // A message delivered twice in one batch is issued once: its second delivery is a duplicate.
  const issued = new Set<string>();
  const count = (delivery: Delivery, messageId: string, outcome: IssueOutcome | undefined) => {
    if (outcome?.issued && !issued.has(messageId)) {
      issued.add(messageId);
      pass.issued++;
    } else pass.duplicates++;
    failpoint("consumer_after_receipt");
    handled.push(delivery);
  };
  // The batch in one statement; should it fail, one by one, so that one message the database
  // refuses does not hold up the others.
  const batch = await issueReceipts(
    deps.prisma,
    receipts.map((r) => r.request),
  ).catch(() => null);
  for (const { delivery, request } of receipts) {
    if (batch) count(delivery, request.messageId, batch.get(request.messageId));
    else {
      try {
        const outcome = (await issueReceipts(deps.prisma, [request])).get(request.messageId);
        count(delivery, request.messageId, outcome);
      } catch (error) {
        await reject(delivery, error);
      }
    }
  }
  // Refund receipts are rare beside payments': one statement each.
  for (const { delivery, request } of refunds) {
    try {
      count(delivery, request.messageId, await issueRefundReceipt(deps.prisma, request));
    } catch (error) {
      await reject(delivery, error);
    }
  }
  if (handled.length > 0) await deps.transport.ack(handled);
  // A batch job holds several messages: a full pass may deliver more than `batchSize`.
  pass.more = deliveries.length >= batchSize;
  return pass;
}

export function startReceiptsConsumer(
  deps: { prisma: Db; transport: MessageTransport },
  opts: ConsumerOptions = {},
): Poller {
  return startPoller("receipts consumer", async () => (await consumeReceipts(deps, opts)).more, {
    idleMs: opts.idleMs ?? CONSUMER_DEFAULTS.idleMs,
    maxBackoffMs: 30_000,
  });
}
