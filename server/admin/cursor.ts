import { domainErrors } from "../errors";
import { isInt8Id } from "./schemas";

/** A position in the keys listing, ordered by id desc (newest first). */
export interface KeyCursor {
  id: bigint;
}

/** Opaque to clients: base64url of `k<id>`. */
export function encodeKeyCursor(cursor: KeyCursor): string {
  return Buffer.from(`k${cursor.id}`, "utf8").toString("base64url");
}

export function decodeKeyCursor(value: string): KeyCursor {
  const match = /^k(\d{1,19})$/.exec(Buffer.from(value, "base64url").toString("utf8"));
  if (!match || !isInt8Id(match[1] as string))
    throw domainErrors.invalid("The cursor is not one this API returned.");
  return { id: BigInt(match[1] as string) };
}
