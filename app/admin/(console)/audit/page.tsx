import { refresh } from "next/cache";
import { adminCaller } from "@/server/http/admin-session";
import { utc } from "../../_components/format";
import { Mono } from "../../_components/ui";

export const dynamic = "force-dynamic";

async function endSession(form: FormData): Promise<void> {
  "use server";
  const admin = await adminCaller();
  await admin.sessions.end({ id: String(form.get("id") ?? "") }).catch(() => undefined);
  refresh();
}

/**
 * Who is signed in to the console, ending a sign-in, and the audit log of admin actions and
 * refusals, each with the person's name (decisions 0063, 0200).
 */
export default async function AdminAuditPage() {
  const admin = await adminCaller();
  const [sessions, events] = await Promise.all([admin.sessions.list(), admin.audit.list()]);
  return (
    <>
      <header className="page-head">
        <h1>Audit</h1>
      </header>

      <section className="card" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        <p className="muted">
          Ended by signing out, here, by removing the operator, or (for sessions of the admin token) by
          changing <code>ADMIN_TOKEN</code>.
        </p>
        <div className="table-scroll">
          <table aria-label="Admin sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Who</th>
                <th scope="col">Signed in (UTC)</th>
                <th scope="col">From</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id}>
                  <td>
                    <Mono>{s.id}</Mono>
                  </td>
                  <td>{s.operator ?? "Admin token"}</td>
                  <td>{utc(s.createdAt)}</td>
                  <td>{s.address ?? "—"}</td>
                  <td>
                    {s.live ? `live until ${utc(s.expiresAt)}` : `ended${s.endedBy ? ` (${s.endedBy})` : ""}`}
                  </td>
                  <td>
                    {s.live && (
                      <form action={endSession}>
                        <input type="hidden" name="id" value={s.id} />
                        <button type="submit" className="secondary" aria-label={`End session ${s.id}`}>
                          End
                        </button>
                      </form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit log</h2>
        <p className="muted">
          Every action that changes something and every refused attempt: who, from where, when, and how it
          ended.
        </p>
        {events.length === 0 ? (
          <p>No admin actions yet.</p>
        ) : (
          <div className="table-scroll">
            <table aria-label="Audit log">
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">From</th>
                  <th scope="col">Action</th>
                  <th scope="col">On</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr key={e.id}>
                    <td>{utc(e.at)}</td>
                    <td>
                      <Mono>{e.actor}</Mono>
                    </td>
                    <td>{e.address ?? "—"}</td>
                    <td>{e.action}</td>
                    <td>{e.subject ?? "—"}</td>
                    <td>{e.outcome}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
