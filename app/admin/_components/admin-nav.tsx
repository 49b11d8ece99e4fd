"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";

const SECTIONS = [
  { href: "/admin", label: "Overview", current: (path: string) => path === "/admin" },
  { href: "/admin/keys", label: "Keys", current: (path: string) => path.startsWith("/admin/keys") },
  {
    href: "/admin/authorizations",
    label: "Authorizations",
    current: (path: string) => path.startsWith("/admin/authorizations"),
  },
  { href: "/admin/ledger", label: "Ledger", current: (path: string) => path.startsWith("/admin/ledger") },
  {
    href: "/admin/security",
    label: "Security",
    current: (path: string) => path.startsWith("/admin/security"),
  },
];

/** The admin's sections, the current one marked for sight and for screen readers. */
export function AdminNav({ children }: { children: ReactNode }) {
  const path = usePathname();
  return (
    <nav className="admin-nav" aria-label="Admin">
      {SECTIONS.map((s) => (
        <Link key={s.href} href={s.href} aria-current={s.current(path) ? "page" : undefined}>
          {s.label}
        </Link>
      ))}
      {children}
    </nav>
  );
}
