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

const STATUSES = ["pending", "succeeded", "failed"] as const;

/** Every refund, newest first, with who asked for it (decision 0201). */
export default async function AdminRefundsPage({
  searchParams,
}: {
  searchParams: Promise<ListSearchParams>;
}) {
  const params = await searchParams;
  const admin = await adminCaller();
  const page = await admin.refunds.list(listInput(params));
  return (
    <>
      <header className="page-head">
        <h1>Refunds</h1>
      </header>
      <section className="card">
        <ListSearch path="/admin/refunds" params={params} statuses={STATUSES} label="refunds" />
        {page.rows.length === 0 ? (
          <p>No refunds match.</p>
        ) : (
          <div className="table-scroll">
            <table aria-label="Refunds">
              <thead>
                <tr>
                  <th scope="col">Refund</th>
                  <th scope="col">Shopper</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">By</th>
                  <th scope="col">Created (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/admin/orders/${r.orderId}`}>
                        <Mono>{r.id}</Mono>
                      </Link>
                    </td>
                    <td>{r.email}</td>
                    <td>{formatMoney(r.amountMinor, r.currency)}</td>
                    <td>{r.status}</td>
                    <td>{r.reason}</td>
                    <td>{r.createdBy}</td>
                    <td>{utc(r.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ListPager next={page.nextCursor ? nextHref("/admin/refunds", params, page.nextCursor) : null} />
      </section>
    </>
  );
}
