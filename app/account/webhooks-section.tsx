import type { serverCaller } from "@/server/http/rsc";
import { WEBHOOK_EVENT_TYPES } from "@/server/webhooks";
import { SecretForm } from "./secret-form";
import { addWebhookAction, rotateWebhookSecretAction, webhookAction } from "./webhook-actions";

type ServerCaller = Awaited<ReturnType<typeof serverCaller>>["caller"];

function ActionButton({ id, act, label }: { id: string; act: string; label: string }) {
  return (
    <form action={webhookAction} style={{ display: "inline" }}>
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="do" value={act} />
      <button type="submit" className="secondary">
        {label}
      </button>
    </form>
  );
}

/** The account's webhook endpoints: add, reveal-once secret, rotate, latest deliveries, replay, test. */
export async function WebhooksSection({ caller }: { caller: ServerCaller }) {
  const endpoints = await caller.webhooks.list();
  const deliveries = await Promise.all(endpoints.map((e) => caller.webhooks.deliveries({ id: e.id })));
  return (
    <section aria-label="Webhooks" className="account-section">
      <h2>Webhooks</h2>
      <p className="muted">
        Every payment and refund event is POSTed to your endpoints, signed to the Standard Webhooks spec
        (verify with the <code>standardwebhooks</code> package and your <code>whsec_</code> secret). Delivery
        is at least once and in no particular order: deduplicate by <code>webhook-id</code>, and keep the
        newest <code>data.updatedAt</code> per object.
      </p>
      {endpoints.length === 0 && <p>No webhook endpoints yet.</p>}
      {endpoints.map((endpoint, i) => (
        <article key={endpoint.id} className="card" aria-label={`Endpoint ${endpoint.url}`}>
          <p>
            <code>{endpoint.url}</code>{" "}
            <span className="muted">
              ({endpoint.events.join(", ")};{" "}
              {endpoint.status === "enabled" ? "enabled" : `disabled: ${endpoint.disabledReason}`})
            </span>
          </p>
          {endpoint.disabledReason === "failing" && (
            <p role="alert" className="error">
              Disabled: every delivery failed for days. Fix the receiver, then enable it; its pending messages
              go out again.
            </p>
          )}
          {endpoint.disabledReason === "gone" && (
            <p role="alert" className="error">
              Disabled: the receiver answered 410 Gone.
            </p>
          )}
          <p>
            <ActionButton id={endpoint.id} act="test" label="Send test event" />{" "}
            {endpoint.status === "disabled" && <ActionButton id={endpoint.id} act="enable" label="Enable" />}{" "}
            <ActionButton id={endpoint.id} act="delete" label="Delete" />
          </p>
          <form action={webhookAction} aria-label="Replay failed messages">
            <input type="hidden" name="id" value={endpoint.id} />
            <input type="hidden" name="do" value="replay-failed" />
            <label>
              Failed since (UTC) <input type="datetime-local" name="since" required />
            </label>{" "}
            <label>
              until <input type="datetime-local" name="until" required />
            </label>{" "}
            <button type="submit" className="secondary">
              Replay failed
            </button>
          </form>
          <SecretForm action={rotateWebhookSecretAction} label="Rotate secret">
            <input type="hidden" name="id" value={endpoint.id} />
          </SecretForm>
          <div className="table-scroll">
            <table aria-label="Latest deliveries">
              <thead>
                <tr>
                  <th>Event</th>
                  <th>Status</th>
                  <th>Attempts</th>
                  <th>Last answer</th>
                  <th>Latency</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {(deliveries[i] ?? []).map((d) => (
                  <tr key={d.messageId}>
                    <td>
                      {d.eventType}{" "}
                      <span className="muted">{d.createdAt.slice(0, 19).replace("T", " ")}</span>
                    </td>
                    <td>{d.status}</td>
                    <td>{d.attempts}</td>
                    <td>
                      {d.last ? (d.last.httpStatus ?? "no answer") : "—"}{" "}
                      <span className="muted">{d.last?.responseExcerpt?.slice(0, 80)}</span>
                    </td>
                    <td>{d.last ? `${d.last.latencyMs} ms` : "—"}</td>
                    <td>
                      <ActionButton id={d.messageId} act="replay" label="Replay" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </article>
      ))}
      <h3>Add an endpoint</h3>
      <SecretForm action={addWebhookAction} label="Add endpoint">
        <label htmlFor="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" required placeholder="https://shop.example/webhooks" />
        <fieldset>
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type} style={{ display: "block" }}>
              <input type="checkbox" name="events" value={type} defaultChecked /> {type}
            </label>
          ))}
        </fieldset>
      </SecretForm>
    </section>
  );
}
