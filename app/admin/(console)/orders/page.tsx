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

const STATUSES = ["pending_payment", "authorized", "paid"] as const;

/** Every order, newest first, searchable by its id or a payment's (decision 0201). */
export default async function AdminOrdersPage({ searchParams }: { searchParams: Promise<ListSearchParams> }) {
  const params = await searchParams;
  const admin = await adminCaller();
  const page = await admin.orders.list(listInput(params));
  return (
    <>
      <header className="page-head">
        <h1>Orders</h1>
      </header>
      <section className="card">
        <ListSearch path="/admin/orders" params={params} statuses={STATUSES} label="orders" />
        {page.rows.length === 0 ? (
          <p>No orders match.</p>
        ) : (
          <div className="table-scroll">
            <table aria-label="Orders">
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Shopper</th>
                  <th scope="col">Total</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((o) => (
                  <tr key={o.id}>
                    <td>
                      <Link href={`/admin/orders/${o.id}`}>
                        <Mono>{o.id}</Mono>
                      </Link>
                    </td>
                    <td>{o.email}</td>
                    <td>{formatMoney(o.totalMinor, o.currency)}</td>
                    <td>{o.status}</td>
                    <td>{utc(o.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ListPager next={page.nextCursor ? nextHref("/admin/orders", params, page.nextCursor) : null} />
      </section>
    </>
  );
}
