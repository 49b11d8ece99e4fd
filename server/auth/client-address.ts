import { env } from "../env";

/**
 * The client's address from X-Forwarded-For, counting from the right: the last entry is the
 * one the server itself added for the socket's peer (Next through scripts/lib/peer-address.cjs,
 * the API's Node server in node-server.ts), and each of the `trustedHops` proxies in front
 * (TRUSTED_PROXY_HOPS) appended the address it saw. Entries further left are whatever the
 * client sent and are never believed (docs/decisions/0064).
 */
export function clientAddress(headers: Headers, trustedHops = env.TRUSTED_PROXY_HOPS): string {
  const entries = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return "unknown";
  // Fewer entries than hops: the request came through fewer proxies; its first hop is the nearest truth.
  return entries[Math.max(0, entries.length - 1 - trustedHops)] ?? "unknown";
}
