import { isIPv4, isIPv6 } from "node:net";
import { env } from "../env";
import { peerAddressInstalled } from "./peer-address";

/**
 * The client's address from X-Forwarded-For, counting from the right: the last entry is the
 * socket's peer, which the server itself appended (server/auth/peer-address.ts, installed by
 * instrumentation.ts in every server Next starts, and by the API's Node server), and each of the
 * `trustedHops` proxies in front (TRUSTED_PROXY_HOPS) appended the address it saw. Entries
 * further left are whatever the client sent and are never believed (decisions 0064, 0145).
 */
export function clientAddress(headers: Headers, trustedHops = env.TRUSTED_PROXY_HOPS): string {
  // Inside Next without the peer appended, the last entry could be the client's own words: refuse.
  if (process.env.NEXT_RUNTIME && !peerAddressInstalled())
    throw new Error(
      "the socket's address is not appended to X-Forwarded-For (instrumentation.ts did not run)",
    );
  const entries = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  // Only a call without HTTP (a test's caller, a script) has no entry: every server appends one.
  if (entries.length === 0) return IN_PROCESS;
  // Fewer entries than hops: the request came through fewer proxies; its first hop is the nearest truth.
  return entries[Math.max(0, entries.length - 1 - trustedHops)] ?? IN_PROCESS;
}

export const IN_PROCESS = "in-process";

/**
 * What a per-address limit counts by: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * unwrapped), an IPv6 address by its /64, the smallest block one subscriber usually gets, so
 * rotating through a block's addresses does not buy more tries.
 */
export function addressGroup(address: string): string {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (!isIPv6(bare)) return address;
  return `${expandIPv6(bare).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros ("2001:db8::1" → 2001, db8, 0 …). */
function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.split("::");
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  // An embedded IPv4 tail ("::1.2.3.4") counts as two groups.
  const groups = (s: string | undefined) => part(s).flatMap((g) => (g.includes(".") ? ipv4Groups(g) : [g]));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = Array(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16).toString(16));
}

function ipv4Groups(v4: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split(".").map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
