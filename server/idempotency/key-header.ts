/** Largest key accepted, as Stripe: long enough for any UUID or derived key, short enough to index. */
export const MAX_KEY_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

export type KeyHeaderResult = { ok: true; key: string } | { ok: false; reason: string };

/**
 * Reads the Idempotency-Key header. The IETF draft makes it a Structured Field String
 * (`"abc"`); Stripe-style bare values are accepted too. Either way the key itself must be
 * 1..255 printable ASCII characters.
 */
export function parseIdempotencyKey(raw: string | null): KeyHeaderResult {
  if (raw === null || raw === "") return { ok: false, reason: "The Idempotency-Key header is required." };
  const key = raw.startsWith('"') ? parseSfString(raw) : raw;
  if (key === null)
    return { ok: false, reason: "The Idempotency-Key header is not a valid structured string." };
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    return { ok: false, reason: `The Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters long.` };
  }
  if (!PRINTABLE_ASCII.test(key)) {
    return { ok: false, reason: "The Idempotency-Key may contain only printable ASCII characters." };
  }
  return { ok: true, key };
}

/** RFC 9651 sf-string: quoted, where the only escapes are backslash-quote and backslash-backslash. */
function parseSfString(raw: string): string | null {
  let out = "";
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') return i === raw.length - 1 ? out : null;
    if (c === "\\") {
      const next = raw[++i];
      if (next !== '"' && next !== "\\") return null;
      out += next;
    } else out += c;
  }
  return null;
}
