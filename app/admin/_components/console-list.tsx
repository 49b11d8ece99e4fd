import Link from "next/link";
import type { ReactNode } from "react";
import { adminCaller } from "@/server/http/admin-session";
import { ListPager, ListSearch, type ListSearchParams, listInput, nextHref } from "./list-search";
import { Mono } from "./ui";

type AdminCaller = Awaited<ReturnType<typeof adminCaller>>;

export interface ListColumn<Row> {
  header: string;
  cell(row: Row): ReactNode;
}

/**
 * One of the console's searchable lists (decision 0201): where it lives, the statuses it can be
 * narrowed to, the procedure that reads a page of it, and its columns. The pages only declare it.
 */
export interface ConsoleList<Row extends { id: string }> {
  /** The page's heading and the table's name, e.g. "Orders". */
  title: string;
  path: `/admin/${string}`;
  statuses: readonly string[];
  load(
    admin: AdminCaller,
    input: ReturnType<typeof listInput>,
  ): Promise<{ rows: Row[]; nextCursor: string | null }>;
  columns: readonly ListColumn<Row>[];
}

/** Declares a list; its row type is read from `load`, so the columns are checked against it. */
export function consoleList<Row extends { id: string }>(list: ConsoleList<Row>): ConsoleList<Row> {
  return list;
}

/** A row's id, linked to its order's page (where its payment, refunds and trail are). */
export function OrderLink({ orderId, id }: { orderId: string; id: string }) {
  return (
    <Link href={`/admin/orders/${orderId}`}>
      <Mono>{id}</Mono>
    </Link>
  );
}

/** A list page: the search form, a page of rows newest first, and the link to older ones. */
export async function ConsoleListPage<Row extends { id: string }>({
  list,
  searchParams,
}: {
  list: ConsoleList<Row>;
  searchParams: Promise<ListSearchParams>;
}) {
  const params = await searchParams;
  const page = await list.load(await adminCaller(), listInput(params));
  const noun = list.title.toLowerCase();
  return (
    <>
      <header className="page-head">
        <h1>{list.title}</h1>
      </header>
      <section className="card">
        <ListSearch path={list.path} params={params} statuses={list.statuses} label={noun} />
        {page.rows.length === 0 ? (
          <p>No {noun} match.</p>
        ) : (
          <div className="table-scroll">
            {/* On a phone each row becomes a card, each value labelled with its column (admin.css). */}
            <table aria-label={list.title} className="responsive">
              <thead>
                <tr>
                  {list.columns.map((c) => (
                    <th key={c.header} scope="col">
                      {c.header}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {page.rows.map((row) => (
                  <tr key={row.id}>
                    {list.columns.map((c) => (
                      <td key={c.header} data-label={c.header}>
                        {c.cell(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ListPager next={page.nextCursor ? nextHref(list.path, params, page.nextCursor) : null} />
      </section>
    </>
  );
}
