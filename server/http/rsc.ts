import { headers } from "next/headers";
import { authenticate } from "../auth/authenticate";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import { createCaller } from "../root";

/** A tRPC caller for server components and actions, authenticated by the request's cookies. */
export async function serverCaller() {
  const reqHeaders = await headers();
  const principal = await authenticate(db(), reqHeaders, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  return { caller: createCaller(createContextInner({ principal, reqHeaders })), principal };
}
