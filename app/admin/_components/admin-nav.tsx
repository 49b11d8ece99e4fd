"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";

const SECTIONS: { href: string; label: string; exact?: boolean }[] = [
  { href: "/admin", label: "Overview", exact: true },
  { href: "/admin/orders", label: "Orders" },
  { href: "/admin/payments", label: "Payments" },
  { href: "/admin/refunds", label: "Refunds" },
  { href: "/admin/authorizations", label: "Authorizations" },
  { href: "/admin#webhooks-heading", label: "Webhooks", exact: true },
  { href: "/admin/keys", label: "Keys" },
  { href: "/admin/ledger", label: "Ledger" },
  { href: "/admin/audit", label: "Audit" },
  { href: "/admin/operators", label: "Operators" },
];

/** The console's sections, the current one marked for sight and for screen readers. */
export function AdminNav({ children }: { children: ReactNode }) {
  const path = usePathname();
  return (
    <nav className="admin-nav" aria-label="Admin">
      {SECTIONS.map((s) => {
        const current = s.exact ? path === s.href : path.startsWith(s.href);
        return (
          <Link key={s.href} href={s.href} aria-current={current ? "page" : undefined}>
            {s.label}
          </Link>
        );
      })}
      {children}
    </nav>
  );
}
