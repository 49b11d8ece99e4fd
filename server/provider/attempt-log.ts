/**
 * Whether a keyed POST may have reached the provider, across the SDK's own retries.
 */
import http from "node:http";
import https from "node:https";
import Stripe from "stripe";

/** Errors that happen before a connection exists, so before any byte of a request is written. */
export const NEVER_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL"]);

/**
 * Whether any attempt the SDK made for a POST may have reached the provider: the SDK retries a
 * reset connection once on its own, so its final error (a refused connection, say) does not tell
 * about the attempts before it. Attempts are told apart by their Idempotency-Key; concurrent calls
 * with one key share an entry and count as reached if any attempt did.
 */
export class AttemptLog {
  private readonly keys = new Map<string, { calls: number; left: boolean }>();
  readonly client: Stripe.HttpClient;

  constructor(protocol: "http" | "https") {
    // Idle connections are closed after 4 s, before a server's usual 5 s keep-alive timeout can
    // close one under a request that was just sent.
    const keepAlive = { keepAlive: true, timeout: 4000 };
    const inner = Stripe.createNodeHttpClient(
      protocol === "http" ? new http.Agent(keepAlive) : new https.Agent(keepAlive),
    );
    this.client = {
      getClientName: () => inner.getClientName(),
      makeRequest: (host, port, path, method, headers, body, proto, timeout) => {
        const sent = inner.makeRequest(host, port, path, method, headers, body, proto, timeout);
        const key = headers["Idempotency-Key"];
        if (typeof key === "string") {
          sent.then(
            () => this.mark(key),
            (err: { code?: unknown }) => {
              if (!(typeof err?.code === "string" && NEVER_CONNECTED.has(err.code))) this.mark(key);
            },
          );
        }
        return sent;
      },
    };
  }

  /** Runs a POST keyed `key`; on failure, `fail` gets the error and whether any attempt may have left. */
  async send<T>(key: string, call: () => Promise<T>, fail: (err: unknown, left: boolean) => T): Promise<T> {
    const entry = this.keys.get(key) ?? { calls: 0, left: false };
    entry.calls++;
    this.keys.set(key, entry);
    try {
      return await call();
    } catch (err) {
      return fail(err, entry.left);
    } finally {
      entry.calls--;
      if (entry.calls === 0 && this.keys.get(key) === entry) this.keys.delete(key);
    }
  }

  private mark(key: string): void {
    const entry = this.keys.get(key);
    if (entry) entry.left = true;
  }
}
