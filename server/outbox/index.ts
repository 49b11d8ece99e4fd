export {
  paymentMessageId,
  refundMessageId,
  type TEnvelope,
  TOPICS,
  type TPaymentDeclined,
  type TPaymentSucceeded,
  type TReceiptLine,
  type TRefundSucceeded,
  type TTopic,
  ZEnvelope,
  ZPaymentSucceeded,
  ZReceiptLine,
  ZRefundSucceeded,
} from "./events";
export { type Poller, startPoller } from "./poller";
export { pruneSentMessages } from "./prune";
export { RELAY_DEFAULTS, type RelayOptions, relayOutboxBatch, startRelay } from "./relay";
export { type OutboxStats, outboxStats } from "./stats";
export {
  type Delivery,
  type MessageTransport,
  QUEUES,
  ROUTES,
  startQueueTransport,
  TRANSPORT_DEFAULTS,
  type TransportOptions,
} from "./transport";
export {
  EVENT_NOT_WRITTEN,
  type PaymentFacts,
  paymentChangedEvent,
  paymentSucceededEvent,
  recordPaymentEvent,
  recordRefundEvent,
  type SettledPaymentColumns,
} from "./writer";
