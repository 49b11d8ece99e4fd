import Link from "next/link";
import { serverCaller } from "@/server/http/rsc";
import { signOutAction } from "./actions";

/**
 * The header's account corner: who is signed in and a Sign out button, or the way in. A long
 * name or email is cut with an ellipsis (the full one in its title and accessible name), so the
 * header wraps within a phone's width instead of widening the page.
 */
export async function SessionNav() {
  const { principal } = await serverCaller();
  if (!principal.account) return <Link href="/signin">Sign in</Link>;
  const { name } = principal.account;
  return (
    <span className="session-nav">
      <Link href="/account" className="session-name" title={name} aria-label={`Account of ${name}`}>
        {name}
      </Link>
      <form action={signOutAction}>
        <button type="submit" className="link-button">
          Sign out
        </button>
      </form>
    </span>
  );
}
