import Link from "next/link";
import { formatMoney } from "@/app/money";
import { adminCaller } from "@/server/http/admin-session";
import { utc } from "../../_components/format";
import {
  ListPager,
  ListSearch,
  type ListSearchParams,
  listInput,
  nextHref,
} from "../../_components/list-search";
import { Mono } from "../../_components/ui";

export const dynamic = "force-dynamic";

const STATUSES = ["pending", "authorized", "succeeded", "declined", "failed", "canceled"] as const;

/** Every payment, newest first, searchable (decision 0201); a row leads to its order. */
export default async function AdminPaymentsPage({
  searchParams,
}: {
  searchParams: Promise<ListSearchParams>;
}) {
  const params = await searchParams;
  const admin = await adminCaller();
  const page = await admin.payments.list(listInput(params));
  return (
    <>
      <header className="page-head">
        <h1>Payments</h1>
      </header>
      <section className="card">
        <ListSearch path="/admin/payments" params={params} statuses={STATUSES} label="payments" />
        {page.rows.length === 0 ? (
          <p>No payments match.</p>
        ) : (
          <div className="table-scroll">
            <table aria-label="Payments">
              <thead>
                <tr>
                  <th scope="col">Payment</th>
                  <th scope="col">Shopper</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Refunded</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link href={`/admin/orders/${p.orderId}`}>
                        <Mono>{p.id}</Mono>
                      </Link>
                    </td>
                    <td>{p.email}</td>
                    <td>{formatMoney(p.amountMinor, p.currency)}</td>
                    <td>{p.refundedMinor ? formatMoney(p.refundedMinor, p.currency) : "—"}</td>
                    <td>{p.status}</td>
                    <td>{utc(p.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ListPager next={page.nextCursor ? nextHref("/admin/payments", params, page.nextCursor) : null} />
      </section>
    </>
  );
}
