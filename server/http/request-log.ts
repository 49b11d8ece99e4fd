import type { RequestObservation } from "../keys";
import { errorField, type Logger, logger } from "../log";
import { type Metrics, metrics } from "../metrics";
import { requestIdOf } from "./request-id";

export interface ObservedRequest {
  requestId: string;
  /** Filled by the idempotency middleware (through the tRPC context) for the log line. */
  observation: RequestObservation;
  log: Logger;
}

/**
 * Wraps one API request: gives it an id (`X-Request-Id`, the caller's or a new one), and after
 * the answer writes its one log line and its latency sample, however it ended. `procedure` is
 * the metrics label and must come from a closed set (route names, never raw paths).
 */
export async function observeRequest(
  req: Request,
  labels: { procedure: string; logged?: string | string[] },
  answer: (request: ObservedRequest) => Promise<Response>,
  onCrash: () => Response,
  deps: { log?: Logger; metrics?: Metrics } = {},
): Promise<Response> {
  const log = deps.log ?? logger;
  const started = performance.now();
  const requestId = requestIdOf(req.headers);
  const observation: RequestObservation = {};
  let response: Response;
  try {
    response = await answer({ requestId, observation, log });
  } catch (error) {
    log.error({ requestId, err: errorField(error) }, "request failed");
    response = onCrash();
  }
  response.headers.set("X-Request-Id", requestId);
  const seconds = (performance.now() - started) / 1000;
  const m = deps.metrics ?? metrics;
  m.requestDuration.observe({ procedure: labels.procedure, status: String(response.status) }, seconds);
  // Each idempotent procedure's outcomes on their own (a refund's beside a payment's).
  if (observation.idempotency)
    m.idempotentRequests.inc({ procedure: labels.procedure, outcome: observation.idempotency.outcome });
  log.info(
    {
      requestId,
      method: req.method,
      procedure: labels.logged ?? labels.procedure,
      status: response.status,
      durationMs: Math.round(seconds * 10_000) / 10,
      ...(observation.idempotency ? { idempotency: observation.idempotency } : {}),
    },
    "request",
  );
  return response;
}
