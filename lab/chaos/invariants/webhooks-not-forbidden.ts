import { FORBIDDEN_RECEIVER } from "../receiver-records";
import type { Invariant, Violation } from "./types";
import { describeRequest, receivedRequests } from "./webhook-records";

/**
 * Nothing reaches a forbidden address: the receiver listening behind one (every interface: 0.0.0.0,
 * ::, this machine's private address) records nothing, no attempt at a forbidden endpoint got an
 * HTTP answer, and the API registered none of the forbidden URLs.
 */
export const webhooksNotForbidden: Invariant = {
  name: "nothing delivered to a forbidden address",
  check(e) {
    const violations: Violation[] = [];
    for (const { request: r } of receivedRequests(e))
      if (r.receiver === FORBIDDEN_RECEIVER)
        violations.push({
          invariant: this.name,
          detail: `${describeRequest(r)} reached ${r.localAddress} (Host ${r.host}), an address nothing may be sent to`,
        });
    const forbidden = new Map(e.journal.merchants.endpoints.filter((x) => x.forbidden).map((x) => [x.id, x]));
    for (const m of e.books.webhooks.messages) {
      const endpoint = forbidden.get(m.endpointId);
      if (endpoint && m.answers.some((a) => a !== null))
        violations.push({
          invariant: this.name,
          detail: `message ${m.id} to ${endpoint.url} got an HTTP answer (${m.answers.join(", ")}): it was sent`,
        });
    }
    for (const r of e.journal.merchants.forbiddenRegistrations)
      if (r.status !== null && r.status >= 200 && r.status < 300)
        violations.push({ invariant: this.name, detail: `the API registered ${r.url} (${r.status})` });
    return violations;
  },
};
