import { redirect } from "next/navigation";

/** The earlier address of the sessions and the audit log (decision 0063), now under Audit. */
export default function AdminSecurityPage() {
  redirect("/admin/audit");
}
