import { randomBytes } from "node:crypto";
import { type Db, newId } from "../db";
import { type ApiKeyScope, apiKeyPrefix } from "./api-key-format";
import { hashToken } from "./tokens";

export const MAX_KEYS_PER_ACCOUNT = 20;

export interface ApiKeyView {
  id: string;
  label: string;
  scope: ApiKeyScope;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

const VIEW = {
  id: true,
  label: true,
  scope: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
} as const;

function view(row: {
  id: string;
  label: string;
  scope: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}): ApiKeyView {
  return {
    ...row,
    scope: row.scope as ApiKeyScope,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

/**
 * A new API key for the account: 32 random bytes, so a sha256 of it is as safe to store as a
 * slow hash and keeps the Bearer lookup one indexed query. `sk_live_` in production, `sk_test_`
 * elsewhere. The plaintext is returned once.
 */
export async function createApiKey(
  prisma: Db,
  accountId: string,
  opts: { label: string; scope: ApiKeyScope; expiresInDays?: number; production: boolean },
): Promise<{ key: ApiKeyView; secret: string } | { limitReached: true }> {
  if ((await prisma.apiToken.count({ where: { accountId } })) >= MAX_KEYS_PER_ACCOUNT)
    return { limitReached: true };
  const secret = `${apiKeyPrefix(opts.production)}${randomBytes(32).toString("base64url")}`;
  const row = await prisma.apiToken.create({
    data: {
      id: newId(),
      accountId,
      label: opts.label,
      scope: opts.scope,
      tokenHash: hashToken(secret),
      expiresAt: opts.expiresInDays ? new Date(Date.now() + opts.expiresInDays * 86_400_000) : null,
    },
    select: VIEW,
  });
  return { key: view(row), secret };
}

export async function listApiKeys(prisma: Db, accountId: string): Promise<ApiKeyView[]> {
  const rows = await prisma.apiToken.findMany({
    where: { accountId },
    orderBy: { createdAt: "desc" },
    select: VIEW,
  });
  return rows.map(view);
}

/** Deletes the key if it is the account's own; whether one was deleted. */
export async function revokeApiKey(prisma: Db, accountId: string, id: string): Promise<boolean> {
  return (await prisma.apiToken.deleteMany({ where: { id, accountId } })).count === 1;
}
