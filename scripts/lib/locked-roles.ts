// Production's embedded PostgreSQL (docs/decisions/0150): a random superuser password per data
// directory, kept in a 0600 file beside it, and two login roles that are no superuser, each the
// owner of its own database: `checkout` (the app, its migrations, pg-boss) and `payment_provider`.
// Neither can run programs on the host (COPY … TO PROGRAM needs superuser or
// pg_execute_server_program), read files, or reach the other's database.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import pg from "pg";

export interface LockedCredentials {
  superuser: string;
  app: string;
  provider: string;
}

/** The app's and the provider's roles, and their databases of the same names. */
export const LOCKED_ROLES = { app: "checkout", provider: "payment_provider" } as const;

const secret = () => randomBytes(24).toString("base64url");

/** Reads the data directory's credentials, or creates them (mode 0600) on its first start. */
export function readOrCreateCredentials(file: string): LockedCredentials {
  if (!existsSync(file)) {
    const fresh: LockedCredentials = { superuser: secret(), app: secret(), provider: secret() };
    writeFileSync(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    return fresh;
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    // Readable by others: whoever could read it may have the superuser; tighten, and say so.
    chmodSync(file, 0o600);
    console.warn(`[embedded-pg] ${file} was mode ${mode.toString(8)}; set to 600`);
  }
  return JSON.parse(readFileSync(file, "utf8")) as LockedCredentials;
}

export function lockedUrl(port: number, user: string, password: string, database: string): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * Sets the passwords from the file (after initdb's throwaway one, `initialPassword`, on a fresh
 * directory) and makes the two roles and their databases when missing. Returns their URLs.
 */
export async function lockRoles(
  port: number,
  credentials: LockedCredentials,
  initialPassword?: string,
): Promise<{ app: string; provider: string }> {
  const client = new pg.Client(
    lockedUrl(port, "postgres", initialPassword ?? credentials.superuser, "postgres"),
  );
  await client.connect();
  try {
    const literal = (value: string) => client.escapeLiteral(value);
    await client.query(`ALTER ROLE postgres PASSWORD ${literal(credentials.superuser)}`);
    for (const [role, password] of [
      [LOCKED_ROLES.app, credentials.app],
      [LOCKED_ROLES.provider, credentials.provider],
    ] as const) {
      const name = client.escapeIdentifier(role);
      const { rowCount } = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
      const verb = rowCount ? "ALTER" : "CREATE";
      await client.query(
        `${verb} ROLE ${name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${literal(password)}`,
      );
      const db = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [role]);
      if (!db.rowCount) await client.query(`CREATE DATABASE ${name} OWNER ${name}`);
      // Only the owner (and the superuser) may connect: the provider cannot open the app's books.
      await client.query(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
    }
  } finally {
    await client.end();
  }
  return {
    app: lockedUrl(port, LOCKED_ROLES.app, credentials.app, LOCKED_ROLES.app),
    provider: lockedUrl(port, LOCKED_ROLES.provider, credentials.provider, LOCKED_ROLES.provider),
  };
}
