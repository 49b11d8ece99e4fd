import { formatMoney } from "@/app/money";
import type { TLedgerTransaction } from "@/server/admin/schemas";
import { utc } from "./format";

/** One money movement: its entries as debits and credits, with the check that they net to zero. */
export function LedgerTransactionTable({ transaction: t }: { transaction: TLedgerTransaction }) {
  const net = t.entries.reduce((sum, e) => sum + e.amountMinor, 0);
  const currency = t.entries[0]?.currency ?? "EUR";
  return (
    <table className="entries">
      <caption>
        Ledger transaction <code className="mono">{t.id.slice(0, 8)}</code> · {t.kind} ·{" "}
        <time dateTime={t.createdAt}>{utc(t.createdAt)}</time>
      </caption>
      <thead>
        <tr>
          <th scope="col">Account</th>
          <th scope="col" className="entry-type">
            Entry
          </th>
          <th scope="col" className="num">
            Debit
          </th>
          <th scope="col" className="num">
            Credit
          </th>
        </tr>
      </thead>
      <tbody>
        {t.entries.map((e) => (
          <tr key={e.id}>
            <td>
              {e.accountName} <span className="muted">({e.accountCode})</span>
            </td>
            <td className="entry-type">{e.entryType}</td>
            <td className="num">{e.amountMinor > 0 ? formatMoney(e.amountMinor, e.currency) : ""}</td>
            <td className="num">{e.amountMinor < 0 ? formatMoney(-e.amountMinor, e.currency) : ""}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Net</th>
          <td className="entry-type" />
          <td colSpan={2} className={`num ${net === 0 ? "success" : "error"}`}>
            {net === 0 ? "balanced (0)" : `off by ${formatMoney(net, currency)}`}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}
