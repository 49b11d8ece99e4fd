import Link from "next/link";
import { formatMoney } from "@/app/money";
import type { serverCaller } from "@/server/http/rsc";

type ServerCaller = Awaited<ReturnType<typeof serverCaller>>["caller"];

const PAGE_SIZE = 10;

const STATUS_LABEL: Record<string, string> = {
  pending_payment: "awaiting payment",
  authorized: "authorized",
  paid: "paid",
};

/** The customer's orders, newest first, a page at a time (`?orders=<cursor>` for older ones). */
export async function OrderHistory({ caller, cursor }: { caller: ServerCaller; cursor: string | undefined }) {
  const page = await caller.orders.history({ limit: PAGE_SIZE, cursor: cursor ?? null });
  return (
    <section aria-labelledby="orders" className="account-section">
      <h2 id="orders">Your orders</h2>
      {page.orders.length === 0 ? (
        <p>{cursor ? "No older orders." : "No orders yet."}</p>
      ) : (
        <div className="table-scroll">
          <table aria-labelledby="orders" data-testid="order-history">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Order</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Total
                </th>
              </tr>
            </thead>
            <tbody>
              {page.orders.map((o) => (
                <tr key={o.id}>
                  <td>
                    <time dateTime={o.createdAt}>{o.createdAt.slice(0, 16).replace("T", " ")} UTC</time>
                  </td>
                  <td>
                    <Link
                      href={`/checkout?order=${o.id}`}
                      aria-label={`Order ${o.id.slice(0, 8)}, placed ${o.createdAt.slice(0, 10)}`}
                    >
                      <code>{o.id.slice(0, 8)}</code>
                    </Link>
                    <span className="muted small">
                      {" "}
                      · {o.itemCount} {o.itemCount === 1 ? "item" : "items"}
                    </span>
                  </td>
                  <td>
                    <span className={`pill ${o.status === "paid" ? "pill-ok" : "pill-neutral"}`}>
                      {STATUS_LABEL[o.status] ?? o.status}
                    </span>
                  </td>
                  <td className="num">{formatMoney(o.total, o.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Order history pages" className="pager">
        {cursor && <Link href="/account#orders">Newest orders</Link>}
        {page.nextCursor && (
          <Link href={`/account?orders=${encodeURIComponent(page.nextCursor)}#orders`}>Older orders</Link>
        )}
      </nav>
    </section>
  );
}
