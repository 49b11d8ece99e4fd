import { randomBytes } from "node:crypto";
import { type Db, newId } from "../db";
import { hashToken } from "./tokens";

export const MAX_KEYS_PER_ACCOUNT = 20;

export interface ApiKeyView {
  id: string;
  label: string;
  createdAt: string;
}

/**
 * A new API key for the account: 32 random bytes, so a sha256 of it is as safe to store as a
 * slow hash and keeps the Bearer lookup one indexed query. The plaintext is returned once.
 */
export async function createApiKey(
  prisma: Db,
  accountId: string,
  label: string,
  live: boolean,
): Promise<{ key: ApiKeyView; secret: string } | { limitReached: true }> {
  if ((await prisma.apiToken.count({ where: { accountId } })) >= MAX_KEYS_PER_ACCOUNT)
    return { limitReached: true };
  const secret = `${live ? "sk_live" : "sk_test"}_${randomBytes(32).toString("base64url")}`;
  const row = await prisma.apiToken.create({
    data: { id: newId(), accountId, label, tokenHash: hashToken(secret) },
    select: { id: true, label: true, createdAt: true },
  });
  return { key: { ...row, createdAt: row.createdAt.toISOString() }, secret };
}

export async function listApiKeys(prisma: Db, accountId: string): Promise<ApiKeyView[]> {
  const rows = await prisma.apiToken.findMany({
    where: { accountId },
    orderBy: { createdAt: "desc" },
    select: { id: true, label: true, createdAt: true },
  });
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}

/** Deletes the key if it is the account's own; whether one was deleted. */
export async function revokeApiKey(prisma: Db, accountId: string, id: string): Promise<boolean> {
  return (await prisma.apiToken.deleteMany({ where: { id, accountId } })).count === 1;
}
