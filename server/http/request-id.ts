import { randomUUID } from "node:crypto";

// A caller's id is kept only when it cannot forge a log line or grow without bound.
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when it is a plain token, a new UUID otherwise. */
export function requestIdOf(headers: Headers): string {
  const given = headers.get("x-request-id");
  return given && ACCEPTED.test(given) ? given : randomUUID();
}
