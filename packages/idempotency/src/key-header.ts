/** Largest key accepted, as Stripe: long enough for any UUID or derived key, short enough to index. */
export const MAX_KEY_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

export type KeyHeaderResult = { ok: true; key: string } | { ok: false; reason: string };

/**
 * Reads the Idempotency-Key header (docs/decisions/0010-key-header-syntax.md). The IETF draft
 * makes it a Structured Field String (`"abc"`); Stripe-style bare values are accepted too, as
 * another kind of value: `"abc"` and `abc` are two different keys, the quoted one kept in its
 * serialised form. The content must be 1..255 printable ASCII characters. A bare value may not
 * hold a comma: HTTP joins several Idempotency-Key headers with ", ", and one request must carry
 * exactly one key.
 */
export function parseIdempotencyKey(raw: string | null): KeyHeaderResult {
  if (raw === null || raw === "") return { ok: false, reason: "The Idempotency-Key header is required." };
  const quoted = raw.startsWith('"');
  const content = quoted ? parseSfString(raw) : raw;
  if (content === null) {
    return {
      ok: false,
      reason: raw.includes('",')
        ? "Send exactly one Idempotency-Key header."
        : "The Idempotency-Key header is not a valid structured string.",
    };
  }
  if (!quoted && raw.includes(",")) return { ok: false, reason: "Send exactly one Idempotency-Key header." };
  if (content.length === 0 || content.length > MAX_KEY_LENGTH) {
    return { ok: false, reason: `The Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters long.` };
  }
  if (!PRINTABLE_ASCII.test(content)) {
    return { ok: false, reason: "The Idempotency-Key may contain only printable ASCII characters." };
  }
  // A valid sf-string has one serialisation (only \" and \\ are escapes): the raw value is it.
  return { ok: true, key: raw };
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

/**
 * The edge checks of an idempotent call, in one place for every surface: exactly one valid key,
 * and one call per request (a batch or a streamed answer cannot carry this call's own status and
 * headers, so its replay could not be exact).
 */
export function checkIdempotentCall(
  keyHeader: string | null,
  transport: { batched: boolean; streamed?: boolean },
): KeyHeaderResult {
  if (transport.batched || transport.streamed) {
    return {
      ok: false,
      reason: "Idempotent procedures cannot be batched or streamed: send them one per request.",
    };
  }
  return parseIdempotencyKey(keyHeader);
}
