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

/** Who is signed in as the admin, ending a sign-in, and the audit log of admin actions (decision 0063). */
export default async function AdminSecurityPage() {
  const admin = await adminCaller();
  const [sessions, events] = await Promise.all([admin.sessions.list(), admin.audit.list()]);
  return (
    <>
      <header className="page-head">
        <h1>Security</h1>
      </header>

      <section className="card" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Admin sessions</h2>
        <p className="muted">
          Ended by signing out, here, or by changing <code>ADMIN_TOKEN</code> (which ends them all).
        </p>
        <div className="table-scroll">
          <table aria-label="Admin sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
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
          Every admin action that changes something: who, from where, when, and how it ended.
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
