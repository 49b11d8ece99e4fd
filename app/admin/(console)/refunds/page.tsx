import { formatMoney } from "@/app/money";
import { ConsoleListPage, consoleList, OrderLink } from "../../_components/console-list";
import { utc } from "../../_components/format";
import type { ListSearchParams } from "../../_components/list-search";

export const dynamic = "force-dynamic";

/** Every refund, newest first, with who asked for it (decision 0201). */
const REFUNDS = consoleList({
  title: "Refunds",
  path: "/admin/refunds",
  statuses: ["pending", "succeeded", "failed"],
  load: (admin, input) => admin.refunds.list(input),
  columns: [
    { header: "Refund", cell: (r) => <OrderLink orderId={r.orderId} id={r.id} /> },
    { header: "Shopper", cell: (r) => r.email },
    { header: "Amount", cell: (r) => formatMoney(r.amountMinor, r.currency) },
    { header: "Status", cell: (r) => r.status },
    { header: "Reason", cell: (r) => r.reason },
    { header: "By", cell: (r) => r.createdBy },
    { header: "Created (UTC)", cell: (r) => utc(r.createdAt) },
  ],
});

export default function AdminRefundsPage({ searchParams }: { searchParams: Promise<ListSearchParams> }) {
  return <ConsoleListPage list={REFUNDS} searchParams={searchParams} />;
}
