import { formatMoney } from "@/app/money";
import { ConsoleListPage, consoleList, OrderLink } from "../../_components/console-list";
import { utc } from "../../_components/format";
import type { ListSearchParams } from "../../_components/list-search";

export const dynamic = "force-dynamic";

/** Every order, newest first, searchable by its id or a payment's (decision 0201). */
const ORDERS = consoleList({
  title: "Orders",
  path: "/admin/orders",
  statuses: ["pending_payment", "authorized", "paid"],
  load: (admin, input) => admin.orders.list(input),
  columns: [
    { header: "Order", cell: (o) => <OrderLink orderId={o.id} id={o.id} /> },
    { header: "Shopper", cell: (o) => o.email },
    { header: "Total", cell: (o) => formatMoney(o.totalMinor, o.currency) },
    { header: "Status", cell: (o) => o.status },
    { header: "Created (UTC)", cell: (o) => utc(o.createdAt) },
  ],
});

export default function AdminOrdersPage({ searchParams }: { searchParams: Promise<ListSearchParams> }) {
  return <ConsoleListPage list={ORDERS} searchParams={searchParams} />;
}
