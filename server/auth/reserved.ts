import { env } from "../env";

/**
 * Addresses nobody may register: the system's own identities live on `.invalid` (RFC 2606: never
 * deliverable), `.localhost` is never anyone's mailbox either, and RESERVED_EMAIL_DOMAINS names
 * the deployment's own domains (decision 0147).
 */
const ALWAYS_RESERVED = ["invalid", "localhost"];

export function isReservedEmail(
  email: string,
  extra: readonly string[] = env.RESERVED_EMAIL_DOMAINS,
): boolean {
  const domain = email
    .slice(email.lastIndexOf("@") + 1)
    .toLowerCase()
    .replace(/\.$/, "");
  return [...ALWAYS_RESERVED, ...extra].some((d) => domain === d || domain.endsWith(`.${d}`));
}

export const RESERVED_EMAIL_MESSAGE = "That address is reserved: use an email address of your own.";
