import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { env } from "../env";

/**
 * Where a merchant's URL may point (decision 0187). In production an endpoint is https and none
 * of its addresses is loopback, private, link-local (the cloud metadata service), CGNAT,
 * reserved or their IPv6 equivalents; `WEBHOOK_ALLOW_LOOPBACK=on` lets loopback through for
 * development, tests and the chaos checker. Checked at registration and at every delivery after
 * resolution, and the delivery connects to the address that was checked.
 */
export interface AddressPolicy {
  requireHttps: boolean;
  allowLoopback: boolean;
  /** All addresses of a host name (tests substitute one that lies). */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
}
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export function policyFromEnv(): AddressPolicy {
  return { requireHttps: env.isProduction, allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === "on" };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT (and Alibaba's metadata at 100.100.100.200)
  ["169.254.0.0", 16], // link-local: 169.254.169.254 is every cloud's metadata service
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
] as const)
  FORBIDDEN.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["100::", 64], // discard
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local (AWS's metadata at fd00:ec2::254)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local, deprecated
  ["ff00::", 8], // multicast
] as const)
  FORBIDDEN.addSubnet(net, prefix, "ipv6");

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] && hex[2]) {
    const n = (Number.parseInt(hex[1], 16) << 16) | Number.parseInt(hex[2], 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }
  const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/.exec(lower);
  if (sixToFour?.[1] && sixToFour[2]) {
    const n = (Number.parseInt(sixToFour[1], 16) << 16) | Number.parseInt(sixToFour[2], 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }
  return null;
}

/** Why this address may not receive our webhooks, or null when it may. */
export function addressRefusal(address: string, policy: Pick<AddressPolicy, "allowLoopback">): string | null {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? "ipv4" : "ipv6";
  const embedded = family === 6 ? embeddedIpv4(address) : null;
  if (embedded) return addressRefusal(embedded, policy);
  if (LOOPBACK.check(address, type)) return policy.allowLoopback ? null : `${address} is a loopback address`;
  if (FORBIDDEN.check(address, type))
    return `${address} is a private, link-local, shared or reserved address`;
  return null;
}

/** A refused URL or address: `reason` is shown to the merchant. */
export interface UrlRefusal {
  ok: false;
  reason: string;
}

/** The URL's own rules, before any resolution: scheme, no credentials, no fragment. */
export function urlRefusal(raw: string, policy: AddressPolicy): UrlRefusal | { ok: true; url: URL } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not a URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { ok: false, reason: "must be an http(s) URL" };
  if (policy.requireHttps && url.protocol !== "https:") return { ok: false, reason: "must be https" };
  if (url.username || url.password) return { ok: false, reason: "must not carry credentials" };
  if (url.hash) return { ok: false, reason: "must not have a fragment" };
  return { ok: true, url };
}

const defaultResolve = async (hostname: string): Promise<ResolvedAddress[]> =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/**
 * The URL's addresses, every one allowed: one forbidden address refuses the URL (a name with a
 * public and a private address is a rebinding set-up). The first is the one to connect to.
 */
export async function resolveAllowed(
  url: URL,
  policy: AddressPolicy,
): Promise<{ ok: true; address: ResolvedAddress } | UrlRefusal> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (policy.resolve ?? defaultResolve)(host);
    } catch {
      return { ok: false, reason: `${host} does not resolve` };
    }
  }
  const first = addresses[0];
  if (!first) return { ok: false, reason: `${host} does not resolve` };
  for (const a of addresses) {
    const refusal = addressRefusal(a.address, policy);
    if (refusal) return { ok: false, reason: literal ? refusal : `${host} resolves to ${refusal}` };
  }
  return { ok: true, address: first };
}

/** Registration's check: the URL's rules, then its addresses as they resolve now. */
export async function checkEndpointUrl(
  raw: string,
  policy: AddressPolicy,
): Promise<UrlRefusal | { ok: true }> {
  const parsed = urlRefusal(raw, policy);
  if (!parsed.ok) return parsed;
  const resolved = await resolveAllowed(parsed.url, policy);
  return resolved.ok ? { ok: true } : resolved;
}
