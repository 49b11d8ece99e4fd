import { adminCaller, adminPrincipal } from "@/server/http/admin-session";
import { utc } from "../../_components/format";
import { InviteOperatorForm } from "../../_components/invite-operator-form";
import { changeOperatorRole, removeOperator } from "../../_operators/actions";

export const dynamic = "force-dynamic";

/** The console's people and their roles (decision 0200); owners add, change and remove them. */
export default async function AdminOperatorsPage() {
  const admin = await adminCaller();
  const [operators, who] = await Promise.all([admin.operators.list(), adminPrincipal()]);
  const owner = (who?.role ?? "owner") === "owner";
  return (
    <>
      <header className="page-head">
        <h1>Operators</h1>
      </header>
      <section className="card" aria-labelledby="operators-heading">
        <h2 id="operators-heading">People</h2>
        <p className="muted">
          Owners manage operators; operators refund, capture, cancel, re-drive and reconcile; viewers read.
          Removing someone ends their sessions at once.
        </p>
        {operators.length === 0 ? (
          <p>No operators yet: only the admin token signs in.</p>
        ) : (
          <div className="table-scroll">
            <table aria-label="Operators">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Live sessions</th>
                  <th scope="col">Added (UTC)</th>
                  <th scope="col">State</th>
                  {owner && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {operators.map((o) => (
                  <tr key={o.id}>
                    <td>{o.name}</td>
                    <td>{o.email}</td>
                    <td>{o.role}</td>
                    <td>{o.liveSessions}</td>
                    <td>
                      {utc(o.createdAt)} by {o.createdBy}
                    </td>
                    <td>{o.removedAt ? `removed ${utc(o.removedAt)} by ${o.removedBy ?? "—"}` : "active"}</td>
                    {owner && (
                      <td>
                        {!o.removedAt && o.id !== who?.operatorId && (
                          <div className="row-actions">
                            <form action={changeOperatorRole}>
                              <input type="hidden" name="id" value={o.id} />
                              <label className="visually-hidden" htmlFor={`role-${o.id}`}>
                                Role of {o.name}
                              </label>
                              <select id={`role-${o.id}`} name="role" defaultValue={o.role}>
                                <option value="viewer">viewer</option>
                                <option value="operator">operator</option>
                                <option value="owner">owner</option>
                              </select>
                              <button
                                type="submit"
                                className="secondary"
                                aria-label={`Change role of ${o.name}`}
                              >
                                Change
                              </button>
                            </form>
                            <form action={removeOperator}>
                              <input type="hidden" name="id" value={o.id} />
                              <button type="submit" className="danger" aria-label={`Remove ${o.name}`}>
                                Remove
                              </button>
                            </form>
                          </div>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {owner && (
        <section className="card">
          <InviteOperatorForm />
        </section>
      )}
    </>
  );
}
