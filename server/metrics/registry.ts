import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * This process's Prometheus registry. Request latencies and process figures are per process
 * (Prometheus scrapes each instance); the figures read from the database at scrape time
 * (outcome totals, keys, outbox, completer) are the same from every instance.
 */
export function createRegistry() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    requestDuration: new Histogram({
      name: "http_request_duration_seconds",
      help: "API request duration by tRPC procedure and HTTP status, in this process.",
      labelNames: ["procedure", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    idempotentRequests: new Counter({
      name: "idempotent_requests_total",
      help: "Requests to idempotent procedures by procedure and idempotency outcome (claimed, replayed, conflict_in_flight …), in this process.",
      labelNames: ["procedure", "outcome"] as const,
      registers,
    }),
    outcomes: new Counter({
      name: "idempotency_outcomes_total",
      help: "Idempotency outcomes, summed across processes (the same value from every instance).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    keys: new Gauge({
      name: "idempotency_keys",
      help: "Idempotency keys by state (abandoned: in progress with its lease run out).",
      labelNames: ["state"] as const,
      registers,
    }),
    completerBacklog: new Gauge({
      name: "completer_backlog_keys",
      help: "Payments past phase 1 whose attempt is gone, waiting for the completer.",
      registers,
    }),
    completerOldest: new Gauge({
      name: "completer_backlog_oldest_seconds",
      help: "Idle time of the oldest key waiting for the completer (0 when none).",
      registers,
    }),
    refundCompleterBacklog: new Gauge({
      name: "refund_completer_backlog_keys",
      help: "Refunds past phase 1 whose attempt is gone, waiting for the completer.",
      registers,
    }),
    authorizationActions: new Gauge({
      name: "authorization_actions",
      help: "Captures and cancels of authorizations by kind, status and reason (operator, expiry).",
      labelNames: ["kind", "status", "reason"] as const,
      registers,
    }),
    authorized: new Gauge({
      name: "payments_authorized",
      help: "Authorizations holding their amount (neither captured nor released); `expiring`: deadline within a day.",
      labelNames: ["window"] as const,
      registers,
    }),
    refunds: new Gauge({
      name: "refunds",
      help: "Refunds by status (pending, succeeded, failed).",
      labelNames: ["status"] as const,
      registers,
    }),
    outbox: new Gauge({
      name: "outbox_messages",
      help: "Outbox messages by state (failing: pending after a failed publish).",
      labelNames: ["state"] as const,
      registers,
    }),
    outboxOldest: new Gauge({
      name: "outbox_oldest_pending_age_seconds",
      help: "Age of the oldest unsent outbox message (0 when none).",
      registers,
    }),
    consumed: new Gauge({
      name: "consumer_processed_messages",
      help: "Messages a consumer has processed, each once.",
      labelNames: ["consumer"] as const,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: "webhook_deliveries_total",
      help: "Merchant webhook delivery attempts by outcome (succeeded: a 2xx; failed: any other answer, none, or a refused address), summed across processes.",
      labelNames: ["outcome"] as const,
      registers,
    }),
    webhookPending: new Gauge({
      name: "webhook_messages_pending",
      help: "Merchant webhook messages waiting for an attempt, of enabled endpoints.",
      registers,
    }),
    webhookLag: new Gauge({
      name: "webhook_delivery_lag_seconds",
      help: "How long the most overdue merchant webhook message has been due (0 when none).",
      registers,
    }),
    webhookDisabledEndpoints: new Gauge({
      name: "webhook_endpoints_disabled",
      help: "Merchant webhook endpoints disabled (410, persistent failure, or by the merchant).",
      registers,
    }),
    reconciliation: new Gauge({
      name: "reconciliation_mismatches",
      help: "Open mismatches between provider and ledger, kept until evidence or an operator resolves them (absent before the first run).",
      registers,
    }),
    reconciliationProviderError: new Gauge({
      name: "reconciliation_provider_error",
      help: "1 when the latest reconciliation could not read the provider (it then checked our side only), else 0.",
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createRegistry>;

// One registry per process; Next's dev server reloads modules, so keep it on globalThis.
const holder = globalThis as unknown as { checkoutMetrics?: Metrics };
holder.checkoutMetrics ??= createRegistry();
export const metrics: Metrics = holder.checkoutMetrics;
