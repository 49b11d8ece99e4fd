import { randomUUID } from "node:crypto";
import pg from "pg";
import Stripe from "stripe";
import { TEST_PROVIDER_KEY } from "../../provider/auth";
import { CHARGE_SOURCE } from "../../server/reconciler";
import type { Deployment } from "./deployment";
import type { Journal } from "./journal";
import type { Random } from "./random";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Disguise = "unknown_payment" | "second_charge" | "source_only" | "order_only" | "foreign";

/**
 * A charge made at the provider behind the app's back (a leaked key, a support agent's console,
 * a second system on the account), straight to its API. Some look like ours (our source tag, or
 * a payment id), which the reconciler must report; some do not (someone else's on the account).
 */
export async function chargeBehindOurBack(deployment: Deployment, random: Random, journal: Journal) {
  const disguise = random.pick<Disguise>([
    "unknown_payment",
    "second_charge",
    "source_only",
    "order_only",
    "foreign",
  ]);
  const order = await someRow(deployment, "SELECT id::text AS id FROM orders ORDER BY random() LIMIT 1");
  // A second charge for a payment already booked: pending ones are left alone, since a resuming
  // attempt may adopt a charge naming its payment (that is how it finds its own lost answers).
  const booked = await someRow(
    deployment,
    "SELECT id::text AS id FROM payments WHERE status = 'succeeded' ORDER BY random() LIMIT 1",
  );
  const metadata: Record<string, string> = {
    unknown_payment: {
      source: CHARGE_SOURCE,
      payment_id: randomUUID(),
      ...(order ? { order_id: order } : {}),
    },
    second_charge: booked ? { source: CHARGE_SOURCE, payment_id: booked } : { payment_id: randomUUID() },
    source_only: { source: CHARGE_SOURCE },
    order_only: order ? { order_id: order } : {},
    foreign: { invoice: `inv_${random.int(1000, 9999)}` },
  }[disguise];
  // Straight to the provider's API with Stripe's SDK, as any other system on the account would.
  const url = new URL(deployment.providerUrl);
  const stripe = new Stripe(process.env.PAYMENT_PROVIDER_SECRET || TEST_PROVIDER_KEY, {
    host: url.hostname,
    port: url.port,
    protocol: url.protocol === "https:" ? "https" : "http",
    maxNetworkRetries: 0,
  });
  const made = await stripe.paymentIntents
    .create(
      {
        amount: random.int(100, 9000),
        currency: "eur",
        payment_method: "pm_card_visa",
        confirm: true,
        automatic_payment_methods: { enabled: true, allow_redirects: "never" },
        metadata,
      },
      { idempotencyKey: `rogue-${random.uuid()}` },
    )
    .catch(() => null);
  if (!made) return;
  journal.rogue.push({
    chargeId: made.id,
    metadata,
    looksOurs: metadata.source === CHARGE_SOURCE || metadata.payment_id !== undefined,
    createdAt: Date.now(),
  });
}

async function someRow(deployment: Deployment, sql: string): Promise<string | null> {
  const client = new pg.Client(deployment.directDatabaseUrl);
  try {
    await client.connect();
    const { rows } = await client.query<{ id: string }>(sql);
    return rows[0]?.id ?? null;
  } catch {
    return null; // PostgreSQL restarting: no look-alike this time
  } finally {
    await client.end().catch(() => {});
  }
}

export async function rogueLoop(deployment: Deployment, random: Random, journal: Journal, until: number) {
  while (Date.now() < until) {
    await sleep(random.int(5000, 12_000));
    await chargeBehindOurBack(deployment, random, journal).catch(() => {});
  }
}
