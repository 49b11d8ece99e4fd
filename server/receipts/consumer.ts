import type { Db } from "../db";
import { failpoint } from "../failpoints";
import { type Delivery, type MessageTransport, type Poller, QUEUES, startPoller, ZEnvelope } from "../outbox";
import { issueReceipt } from "./issue";

export interface ConsumerOptions {
  batchSize?: number;
  idleMs?: number;
}
export const CONSUMER_DEFAULTS = { batchSize: 10, idleMs: 500 } as const;

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
 * One pass of the receipts service: takes deliveries from its queue, issues each receipt, then
 * acknowledges them. A crash between the two leaves deliveries unacknowledged; they come back
 * after the ack timeout, and issueReceipt recognises their message ids.
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
  for (const delivery of deliveries) {
    try {
      const envelope = ZEnvelope.parse(delivery.data);
      // Only payment.succeeded is routed here; anything else is acknowledged and ignored.
      if (envelope.topic !== "payment.succeeded") pass.ignored++;
      else if ((await issueReceipt(deps.prisma, envelope)).issued) pass.issued++;
      else pass.duplicates++;
      failpoint("consumer_after_receipt");
      handled.push(delivery);
    } catch (error) {
      pass.rejected++;
      // If even this fails, the ack timeout brings the delivery back.
      await deps.transport.reject(delivery, error).catch(() => undefined);
    }
  }
  if (handled.length > 0) await deps.transport.ack(handled);
  pass.more = deliveries.length === batchSize;
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
