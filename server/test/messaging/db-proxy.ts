import net from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that a test can take down and bring back, as a database
 * restart looks to its clients: every open connection is cut, new ones are refused meanwhile.
 */
export async function startDatabaseProxy(databaseUrl: string) {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.pipe(b);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        sockets.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return {
    url: url.toString(),
    takeDown() {
      down = true;
      for (const s of sockets) s.destroy();
    },
    bringUp() {
      down = false;
    },
    async stop() {
      this.takeDown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
