import { getTRPCErrorFromUnknown } from "@trpc/server";
import Link from "next/link";
import { notFound } from "next/navigation";
import { formatMoney } from "@/app/money";
import { adminCaller, adminPrincipal } from "@/server/http/admin-session";
import { utc } from "../../../_components/format";
import { PaymentRefunds } from "../../../_components/payment-refunds";
import { PaymentTrail } from "../../../_components/payment-trail";
import { Facts, Mono } from "../../../_components/ui";

export const dynamic = "force-dynamic";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function AdminOrderPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const admin = await adminCaller();
  const canAct = (await adminPrincipal())?.role !== "viewer";
  if (!UUID.test(id)) notFound();
  const order = await admin.orders.get({ orderId: id }).catch((error: unknown) => {
    if (getTRPCErrorFromUnknown(error).code === "NOT_FOUND") notFound();
    throw error;
  });
  return (
    <>
      <p className="crumbs">
        <Link href="/admin/keys">Keys</Link> / order
      </p>
      <header className="page-head">
        <h1>
          Order <Mono>{order.id}</Mono>
        </h1>
      </header>
      <section className="card" aria-labelledby="order-heading">
        <h2 id="order-heading">Order</h2>
        <Facts
          items={[
            ["Account", order.accountHandle],
            [
              "Status",
              <span key="s" className={`status status-${order.status}`}>
                {order.status}
              </span>,
            ],
            ["Total", formatMoney(order.totalMinor, order.currency)],
            ["Created", utc(order.createdAt)],
          ]}
        />
        <table className="items">
          <caption className="visually-hidden">Items</caption>
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col" className="num">
                Qty
              </th>
              <th scope="col" className="num">
                Price
              </th>
              <th scope="col" className="num">
                Total
              </th>
            </tr>
          </thead>
          <tbody>
            {order.items.map((i) => (
              <tr key={i.sku}>
                <td>
                  {i.name} <span className="muted">{i.sku}</span>
                </td>
                <td className="num">{i.quantity}</td>
                <td className="num">{formatMoney(i.unitPriceMinor, order.currency)}</td>
                <td className="num">{formatMoney(i.lineTotalMinor, order.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card" aria-labelledby="payments-heading">
        <h2 id="payments-heading">Payments ({order.payments.length})</h2>
        {order.payments.length === 0 ? (
          <p className="muted">No payment attempt yet.</p>
        ) : (
          order.payments.map((p) => (
            <div key={p.id}>
              <PaymentTrail payment={p} showOrderLink={false} />
              <PaymentRefunds payment={p} canRefund={canAct} />
            </div>
          ))
        )}
      </section>
    </>
  );
}
