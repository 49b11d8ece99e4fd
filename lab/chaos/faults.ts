import type { Fault } from "./fault-proxy";
import type { Profile } from "./profile";
import type { Random } from "./random";

/**
 * The fault plan the proxy asks for each request: random faults at fixed odds, plus the next
 * `forceHolds` charge requests held (a scripted burst, so a short run sees the ambiguous case).
 */
export class FaultPlan {
  forceHolds = 0;
  constructor(
    private readonly random: Random,
    private readonly profile: Profile,
  ) {}

  decide(method: string, path: string): Fault {
    const r = this.random;
    const isCharge = method === "POST" && path.startsWith("/v1/payment_intents");
    // A refund moves money as a charge does: the same faults at the same odds.
    const movesMoney = isCharge || (method === "POST" && path.startsWith("/v1/refunds"));
    if (isCharge && this.forceHolds > 0) {
      this.forceHolds--;
      return { kind: "hold", ms: this.profile.holdMs };
    }
    const roll = r.int(1, 1000);
    if (movesMoney) {
      if (roll <= 60) return { kind: "error_before", status: r.chance(0.5) ? 500 : 503 };
      if (roll <= 120) return { kind: "reset_after_commit" };
      if (roll <= 140) return { kind: "hold", ms: this.profile.holdMs };
      if (roll <= 290) return { kind: "latency", ms: r.int(50, 1500) };
      return { kind: "none" };
    }
    if (roll <= 20) return { kind: "error_before", status: 503 };
    if (roll <= 120) return { kind: "latency", ms: r.int(20, 400) };
    return { kind: "none" };
  }
}

/**
 * How a merchant's receiver behaves (lab/chaos/receiver.ts): steady (204), flaky (500 at times,
 * some with Retry-After), slow (holds past the delivery timeout at times), gone (410 once the
 * run is under way), broken (500 always: disabled as failing), held (every answer held a moment,
 * so a SIGKILL lands mid-request), forbidden (listens where nothing may be sent).
 */
export const RECEIVER_MODES = ["steady", "flaky", "slow", "gone", "broken", "held", "forbidden"] as const;
export type ReceiverMode = (typeof RECEIVER_MODES)[number];

export interface ReceiverAnswer {
  status: number;
  /** Wait this long before answering (0: at once). */
  holdMs: number;
  retryAfter: string | null;
}

export function receiverAnswer(
  mode: ReceiverMode,
  random: Random,
  at: { sinceStartMs: number; goneAfterMs: number; deliveryTimeoutMs: number },
): ReceiverAnswer {
  const answer = (status: number, holdMs = 0, retryAfter: string | null = null) => ({
    status,
    holdMs,
    retryAfter,
  });
  switch (mode) {
    case "flaky":
      if (random.chance(0.4)) return answer(500, 0, random.chance(0.5) ? "1" : null);
      return answer(200);
    case "slow":
      if (random.chance(0.3)) return answer(204, at.deliveryTimeoutMs * 2);
      return answer(204, random.int(0, 300));
    case "gone":
      return answer(at.sinceStartMs < at.goneAfterMs ? 204 : 410);
    case "broken":
      return answer(500);
    case "held":
      return answer(204, random.int(400, 1500));
    default:
      return answer(204);
  }
}
