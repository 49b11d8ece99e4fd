import { formatMoney } from "@/app/money";
import { ConsoleListPage, consoleList, OrderLink } from "../../_components/console-list";
import { utc } from "../../_components/format";
import type { ListSearchParams } from "../../_components/list-search";

export const dynamic = "force-dynamic";

/** Every payment, newest first, searchable (decision 0201); a row leads to its order. */
const PAYMENTS = consoleList({
  title: "Payments",
  path: "/admin/payments",
  statuses: ["pending", "authorized", "succeeded", "declined", "failed", "canceled"],
  load: (admin, input) => admin.payments.list(input),
  columns: [
    { header: "Payment", cell: (p) => <OrderLink orderId={p.orderId} id={p.id} /> },
    { header: "Shopper", cell: (p) => p.email },
    { header: "Amount", cell: (p) => formatMoney(p.amountMinor, p.currency) },
    { header: "Refunded", cell: (p) => (p.refundedMinor ? formatMoney(p.refundedMinor, p.currency) : "—") },
    { header: "Status", cell: (p) => p.status },
    { header: "Created (UTC)", cell: (p) => utc(p.createdAt) },
  ],
});

export default function AdminPaymentsPage({ searchParams }: { searchParams: Promise<ListSearchParams> }) {
  return <ConsoleListPage list={PAYMENTS} searchParams={searchParams} />;
}
