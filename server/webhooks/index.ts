export {
  type AddressPolicy,
  addressRefusal,
  checkEndpointUrl,
  policyFromEnv,
  type ResolvedAddress,
} from "./address-guard";
export {
  type DeliveryOptions,
  type DeliveryPass,
  deliverDueMessages,
  deliveryOptions,
  startWebhookDelivery,
} from "./deliver";
export {
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  deleteEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateSecret,
  setEndpointEnabled,
  type TWebhookEndpointView,
  ZWebhookEndpoint,
} from "./endpoints";
export {
  TEST_EVENT_TYPE,
  type TWebhookEventType,
  type TWebhookPayload,
  WEBHOOK_EVENT_TYPES,
  webhookEventType,
} from "./event-types";
export { fanOutEvents, fanOutPass, startWebhookFanOut } from "./fan-out";
export { type PruneOptions, pruneWebhookMessages } from "./prune";
export { replayFailedMessages, replayMessage, sendTestEvent } from "./replay";
export { retryAfterSeconds, retryDelaySeconds, SPEC_RETRY_SCHEDULE_SECONDS } from "./schedule";
export {
  type EndpointBacklog,
  endpointBacklogs,
  type WebhookStats,
  webhookStats,
  ZEndpointBacklog,
} from "./stats";
export { recentDeliveries, type TWebhookDeliveryView, ZWebhookDelivery } from "./views";
