import type { Invariant, Violation } from "./types";
import { attemptStartMs, describeRequest, receivedRequests } from "./webhook-records";

/**
 * A disable or delete the app made itself (a 410, persistent failure) has committed by this long
 * after its `now()`: a short transaction, on a loaded machine.
 */
export const COMMIT_SLACK_MS = 5_000;

/**
 * Nothing is delivered to an endpoint after it was disabled or deleted: no attempt started after
 * the change committed (by the merchant's 200, or the app's own timestamp and a slack). An attempt
 * already under way then may still arrive.
 */
export const webhooksNotAfterDisable: Invariant = {
  name: "nothing delivered to a disabled or deleted endpoint after the change",
  check(e) {
    const violations: Violation[] = [];
    const booked = new Map(e.books.webhooks.endpoints.map((x) => [x.id, x]));
    const offBy = (endpointId: string): { at: number; why: string } | null => {
      const times: { at: number; why: string }[] = e.journal.merchants.changes
        .filter((c) => c.endpointId === endpointId)
        .map((c) => ({ at: c.answeredAt, why: `${c.kind} by the merchant` }));
      const b = booked.get(endpointId);
      if (b?.disabledAt && b.disabledReason !== "merchant")
        times.push({ at: b.disabledAt + COMMIT_SLACK_MS, why: `disabled (${b.disabledReason})` });
      return times.sort((x, y) => x.at - y.at)[0] ?? null;
    };
    for (const { request: r, endpoint } of receivedRequests(e)) {
      if (!endpoint) continue;
      const off = offBy(endpoint.id);
      const startMs = attemptStartMs(r);
      if (!off || startMs === null || startMs <= off.at) continue;
      violations.push({
        invariant: this.name,
        detail: `${describeRequest(r)}: its attempt started ${((startMs - off.at) / 1000).toFixed(1)} s or more after the endpoint was ${off.why}`,
      });
    }
    return violations;
  },
};
