import Link from "next/link";
import { serverCaller } from "@/server/http/rsc";
import { signOutAction } from "./actions";

/** The header's account corner: who is signed in and a Sign out button, or the way in. */
export async function SessionNav() {
  const { principal } = await serverCaller();
  if (!principal.account) return <Link href="/signin">Sign in</Link>;
  return (
    <span className="session-nav">
      <Link href="/account" aria-label={`Account of ${principal.account.name}`}>
        {principal.account.name}
      </Link>
      <form action={signOutAction}>
        <button type="submit" className="link-button">
          Sign out
        </button>
      </form>
    </span>
  );
}
