import { getTRPCErrorFromUnknown } from "@trpc/server";
import { refresh } from "next/cache";
import Link from "next/link";
import { notFound } from "next/navigation";
import { formatMoney } from "@/app/money";
import { isInt8Id } from "@/server/admin/schemas";
import { adminCaller } from "@/server/http/admin-session";
import { utc } from "../../../_components/format";
import { LiveRefresh } from "../../../_components/live-refresh";
import { PaymentTrail } from "../../../_components/payment-trail";
import { RedriveForm, type RedriveState } from "../../../_components/redrive-form";
import { Facts, JsonBlock, Mono, StateBadge, Time } from "../../../_components/ui";

export const dynamic = "force-dynamic";

const EVENT_LABELS: Record<string, string> = {
  claimed: "Claimed",
  taken_over: "Taken over",
  progressed: "Progressed",
  completed: "Completed",
  released: "Released",
  fenced: "Fenced off",
  paused: "Paused",
  redrive_requested: "Re-drive requested",
};

const REDRIVE_MESSAGES = {
  settled: "Re-driven: the key is finished.",
  failed: "Re-driven, and it failed again: see the history for why.",
  busy: "Another attempt holds this key right now; nothing was done.",
} as const;

async function redriveKey(id: string, _previous: RedriveState, _form: FormData): Promise<RedriveState> {
  "use server";
  const admin = await adminCaller();
  try {
    const { outcome } = await admin.keys.redrive({ id });
    refresh();
    return { message: REDRIVE_MESSAGES[outcome], error: outcome !== "settled" };
  } catch (error) {
    return { message: error instanceof Error ? error.message : String(error), error: true };
  }
}

export default async function AdminKeyPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const admin = await adminCaller();
  if (!isInt8Id(id)) notFound();
  const key = await admin.keys.get({ id }).catch((error: unknown) => {
    if (getTRPCErrorFromUnknown(error).code === "NOT_FOUND") notFound();
    throw error;
  });
  const now = Date.now();
  // Worth watching while it may still change: running, or waiting for a retry or the completer.
  const unfinished = key.state === "abandoned" || key.state === "needs_attention";
  const live = key.state === "in_progress" || unfinished;
  return (
    <>
      <p className="crumbs">
        <Link href="/admin/keys">Keys</Link> / #{key.id}
      </p>
      <header className="page-head">
        <h1 className="key-title">
          <Mono>{key.key}</Mono> <StateBadge state={key.state} />
        </h1>
        {live && <LiveRefresh seconds={1} />}
      </header>
      {unfinished && key.recoveryPoint !== "started" && (
        <section className="card" aria-labelledby="redrive-heading">
          <h2 id="redrive-heading">Unfinished</h2>
          <p className="muted">
            Completer attempts: {key.completerAttempts}
            {key.lastError && <> · last error: {key.lastError}</>}
          </p>
          <RedriveForm redrive={redriveKey.bind(null, key.id)} />
        </section>
      )}

      <section className="card" aria-labelledby="key-heading">
        <h2 id="key-heading">Key</h2>
        <Facts
          items={[
            ["Account", key.accountHandle],
            ["Procedure", <Mono key="p">{key.procedure}</Mono>],
            ["Recovery point", key.recoveryPoint],
            ["Attempts", key.attempts],
            ["Completer attempts", key.completerAttempts],
            ["Fence", key.fence],
            ["Lease", <Time key="l" iso={key.lockedUntil} now={now} empty="none" />],
            ["Lease length", `${key.leaseSeconds} s`],
            ["Created", utc(key.createdAt)],
            ["Updated", utc(key.updatedAt)],
            ["Completed", key.completedAt ? utc(key.completedAt) : "—"],
            ["Expires", <Time key="e" iso={key.expiresAt} now={now} />],
            ["Fingerprint", <Mono key="f">{key.fingerprint}</Mono>, "wide"],
          ]}
        />
      </section>

      <div className="tiles">
        <section className="card" aria-labelledby="request-heading">
          <h2 id="request-heading">Request parameters</h2>
          <JsonBlock label="Stored request parameters" value={key.requestParams} />
        </section>
        <section className="card" aria-labelledby="response-heading">
          <h2 id="response-heading">
            Stored response{key.responseStatus !== null && <> · HTTP {key.responseStatus}</>}
          </h2>
          {key.responseBody === null ? (
            <p className="muted">Nothing stored yet: the request has not finished.</p>
          ) : (
            <JsonBlock label="Stored response body" value={key.responseBody} />
          )}
        </section>
      </div>

      {key.refund && (
        <section className="card" aria-labelledby="refund-heading">
          <h2 id="refund-heading">Refund</h2>
          <Facts
            items={[
              ["Refund", <Mono key="id">{key.refund.id}</Mono>],
              [
                "Status",
                <span key="s" className={`status status-${key.refund.status}`}>
                  {key.refund.status}
                </span>,
              ],
              ["Amount", formatMoney(key.refund.amountMinor, key.refund.currency)],
              ["Reason", key.refund.reason],
              ["Provider refund", <Mono key="p">{key.refund.providerRefundId ?? "—"}</Mono>],
              ["Created", utc(key.refund.createdAt)],
            ]}
          />
        </section>
      )}

      {key.authorizationAction && (
        <section className="card" aria-labelledby="action-heading">
          <h2 id="action-heading">{key.authorizationAction.kind === "capture" ? "Capture" : "Cancel"}</h2>
          <Facts
            items={[
              ["Action", <Mono key="id">{key.authorizationAction.id}</Mono>],
              [
                "Status",
                <span key="s" className={`status status-${key.authorizationAction.status}`}>
                  {key.authorizationAction.status}
                </span>,
              ],
              [
                "Amount",
                key.authorizationAction.amountMinor === null
                  ? "all that was held"
                  : String(key.authorizationAction.amountMinor),
              ],
              ["By", `${key.authorizationAction.createdBy} (${key.authorizationAction.reason})`],
              ["Created", utc(key.authorizationAction.createdAt)],
            ]}
          />
        </section>
      )}

      <section className="card" aria-labelledby="payment-heading">
        <h2 id="payment-heading">
          {key.refund ? "Refunded payment" : key.authorizationAction ? "Authorized payment" : "Payment"}
        </h2>
        {key.payment ? (
          <PaymentTrail payment={key.payment} />
        ) : (
          <p className="muted">No payment is linked to this key.</p>
        )}
      </section>

      <section className="card" aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <ol className="history">
          {key.events.map((e) => (
            <li key={e.id} className={`event event-${e.kind}`}>
              <strong>{EVENT_LABELS[e.kind] ?? e.kind}</strong>
              <span className="muted"> · fence {e.fence}</span>
              {e.detail && <span> · {e.detail}</span>}
              <time dateTime={e.at}>{utc(e.at)}</time>
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
