/** The payment provider's events, received by webhook or read back, each applied at most once. */
export {
  applyProviderEvent,
  EVENT_TYPES,
  EventNotApplied,
  type EventOutcome,
  type EventSource,
} from "./apply";
export { catchUpProviderEvents } from "./catch-up";
export { type ProviderEvent, SIGNATURE_TOLERANCE_SECONDS, verifyEvent } from "./verify";
