import { connect, createServer, type Socket } from "node:net";

export interface StallingProxy {
  /** `url` with the proxy's host and port in place of the server's. */
  url: string;
  /**
   * From now on nothing passes either way and nothing is closed: every connection through the
   * proxy looks, to its client, like one whose server vanished without a FIN (a crashed host, a
   * partition), and new connections are accepted but never answered.
   */
  stall(): void;
  /**
   * Closes every connection through the proxy and every new one at once, as a stopped server's
   * host would (its PostgreSQL SIGKILLed, a failover cutting sessions).
   */
  cut(): void;
  /** New connections pass again; the stalled ones stay stalled. */
  resume(): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of the database in `url` that can go silent on demand. */
export async function startStallingProxy(url: string): Promise<StallingProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let stalled = false;
  let cut = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    if (cut) return client.destroy();
    if (stalled) return client.pause();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    // Forwarded by hand, not piped, so that stall() can stop both directions at once.
    client.on("data", (d) => {
      if (!stalled) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (!stalled) client.write(d);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("proxy: no port");
  const proxied = new URL(url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(address.port);
  return {
    url: proxied.toString(),
    stall: () => {
      stalled = true;
    },
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    resume: () => {
      stalled = false;
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
