import { db } from "../../db";
import type { Poller } from "../../outbox/poller";
import { startRelay } from "../../outbox/relay";
import { startQueueTransport } from "../../outbox/transport";
import { startReceiptsConsumer } from "../../receipts";
import { FAST_POLL, FAST_TRANSPORT, testDatabaseUrl } from "./fast";

// The relay and/or the receipts consumer as a real process a test can SIGKILL (through
// CHECKOUT_FAILPOINTS) and restart. Usage: messaging-process.ts relay,consumer
// Prints `messaging ready <pid>` once its loops run; SIGTERM stops it cleanly.
const roles = new Set((process.argv[2] ?? "relay,consumer").split(","));
const prisma = db();
const transport = await startQueueTransport({ connectionString: testDatabaseUrl(), ...FAST_TRANSPORT });
const deps = { prisma, transport };
const pollers: Poller[] = [];
if (roles.has("relay"))
  pollers.push(startRelay(deps, { ...FAST_POLL, batchSize: Number(process.env.RELAY_BATCH_SIZE ?? 100) }));
if (roles.has("consumer"))
  pollers.push(
    startReceiptsConsumer(deps, { ...FAST_POLL, batchSize: Number(process.env.CONSUMER_BATCH_SIZE ?? 10) }),
  );
console.log(`messaging ready ${process.pid}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void Promise.all(pollers.map((p) => p.stop()))
      .then(() => transport.stop())
      .then(() => prisma.$disconnect())
      .then(() => process.exit(0));
  });
}
