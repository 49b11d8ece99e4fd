import type { Metadata } from "next";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { signOutAdmin } from "@/server/http/admin-session";
import { AdminNav } from "../_components/admin-nav";
import "../admin.css";

export const metadata: Metadata = { title: "Admin · Idempotent Checkout" };

async function signOut() {
  "use server";
  await signOutAdmin();
  redirect("/admin/signin");
}

// The shell only: every page checks the admin session itself (see adminCaller).
export default function AdminLayout({ children }: { children: ReactNode }) {
  return (
    <div className="admin">
      <AdminNav>
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
