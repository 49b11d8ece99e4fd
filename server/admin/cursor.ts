import { domainErrors } from "../errors";
import { isInt8Id } from "./schemas";

/** A position in the keys listing, ordered by (created_at desc, id desc). */
export interface KeyCursor {
  createdAt: Date;
  id: bigint;
}

/** Opaque to clients: base64url of `<created_at ms>.<id>`. */
export function encodeKeyCursor(cursor: KeyCursor): string {
  return Buffer.from(`${cursor.createdAt.getTime()}.${cursor.id}`, "utf8").toString("base64url");
}

export function decodeKeyCursor(value: string): KeyCursor {
  const match = /^(\d{1,15})\.(\d{1,19})$/.exec(Buffer.from(value, "base64url").toString("utf8"));
  if (!match || !isInt8Id(match[2] as string))
    throw domainErrors.invalid("The cursor is not one this API returned.");
  return { createdAt: new Date(Number(match[1])), id: BigInt(match[2] as string) };
}
