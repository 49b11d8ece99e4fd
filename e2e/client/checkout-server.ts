import { spawn } from "node:child_process";
import { TEST_PROVIDER_KEY } from "../../provider/auth";
import { freePort } from "../../scripts/lib/guarded-process";
import { waitForHealth } from "../../scripts/lib/health-wait";
import { startProvider } from "../../scripts/lib/provider-process";
import type { Charge } from "../../server/provider";
import { stripeProvider } from "../../server/provider/stripe";

export type { Charge } from "../../server/provider";

/**
 * `npm start` as a merchant runs it (on the build the suite already made), against the suite's
 * database and a payment provider of this test's own, so its charges are this test's alone.
 */
export async function startCheckoutServer() {
  const databaseUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("DATABASE_URL is not set: run the e2e tests through `npm test`");
  const provider = await startProvider({ databaseUrl });
  const port = await freePort();
  const server = spawn("npm", ["start"], {
    env: {
      ...process.env,
      // Demo customers (sk_test_alice) exist only in development; say so explicitly.
      APP_ENV: "development",
      CHECKOUT_INSTANCE: "test",
      PORT: String(port),
      PAYMENT_PROVIDER_URL: provider.url,
      LOG_LEVEL: "warn",
      RATE_LIMIT_PAYMENTS_PER_MINUTE: "100000",
      RATE_LIMIT_ORDERS_PER_MINUTE: "100000",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // a process group of its own: npm, tsx and next stop together
  });
  let log = "";
  server.stdout?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  server.stderr?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null && server.pid) {
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
    await provider.stop();
  };
  try {
    await waitForHealth(`${url}/api/health/ready`, 120_000);
  } catch (error) {
    await stop();
    throw new Error(`npm start did not get ready: ${error}\n${log}`);
  }
  return {
    url,
    providerUrl: provider.url,
    log: () => log,
    /** The provider's charges for one order (the app puts the order id in their metadata). */
    async chargesFor(orderId: string): Promise<Charge[]> {
      const charges: Charge[] = [];
      const reader = stripeProvider({ baseUrl: provider.url, secretKey: TEST_PROVIDER_KEY });
      for await (const charge of reader.listCharges({ metadata: { order_id: orderId } }))
        charges.push(charge);
      return charges;
    },
    stop,
  };
}
export type CheckoutServer = Awaited<ReturnType<typeof startCheckoutServer>>;
