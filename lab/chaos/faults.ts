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
