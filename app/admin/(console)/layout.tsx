import type { Metadata } from "next";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { adminPrincipal, signOutAdmin } from "@/server/http/admin-session";
import { AdminNav } from "../_components/admin-nav";
import "../admin.css";

export const metadata: Metadata = { title: "Console · Idempotent Checkout" };

async function signOut() {
  "use server";
  await signOutAdmin();
  redirect("/admin/signin");
}

// The shell only: every page checks the admin session itself (see adminCaller). admin.css hides
// the shop's header, so the console has one navigation and one Sign out.
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const who = await adminPrincipal();
  return (
    <div className="admin">
      <AdminNav>
        {who && (
          <span className="admin-who" data-testid="admin-who">
            {who.operatorId ? who.actor.replace(/ <.*>$/, "") : "Admin token"} · {who.role ?? "owner"}
          </span>
        )}
        <form action={signOut}>
          <button type="submit" className="link-button">
            Sign out
          </button>
        </form>
      </AdminNav>
      {children}
    </div>
  );
}
