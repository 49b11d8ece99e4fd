import { cookies, headers } from "next/headers";
import { authenticate } from "../auth/authenticate";
import { CUSTOMER_COOKIE, sessionCookieOptions, signSession } from "../auth/session";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";

/** A tRPC caller for server components, authenticated by the request's cookies. */
export async function serverCaller() {
  const reqHeaders = await headers();
  const principal = await authenticate(db(), reqHeaders, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  return { caller: createCaller(createContextInner({ principal, reqHeaders })), principal };
}

export async function startCustomerSession(accountId: string) {
  const jar = await cookies();
  jar.set(
    CUSTOMER_COOKIE,
    signSession(env.SESSION_SECRET, "customer", accountId),
    sessionCookieOptions(env.isProduction),
  );
}

export async function endCustomerSession() {
  (await cookies()).delete(CUSTOMER_COOKIE);
}
