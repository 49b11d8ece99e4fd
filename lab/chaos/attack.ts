import { authorizationLoop } from "./authorizers";
import { challengeLoop } from "./challengers";
import type { Deployment, ShopperAccount } from "./deployment";
import type { FaultProxy } from "./fault-proxy";
import type { FaultPlan } from "./faults";
import type { Journal } from "./journal";
import { type Merchants, merchantLoop } from "./merchants";
import { monkeyLoop, restartDatabase } from "./monkey";
import { operate, reconcile, redriveAll } from "./operators";
import type { Profile } from "./profile";
import type { Random } from "./random";
import { refundLoop } from "./refunders";
import { rogueLoop } from "./rogue";
import { IMPATIENT, payOrder, placeOrder, type ShopContext, shopAround } from "./shoppers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** One round of the scripted attacks; the long profile runs one per this many seconds. */
export const CYCLE_SECONDS = 90;

export interface AttackParts {
  deployment: Deployment;
  proxy: FaultProxy;
  plan: FaultPlan;
  journal: Journal;
  profile: Profile;
  random: Random;
  merchants: Merchants;
}

/**
 * The attack: shoppers (some authorizing only, some through 3-D Secure), operators (refunding,
 * capturing and canceling too), rogue charges and kills at random for the whole time, and in
 * each 90 s cycle the scripted attacks at random moments of their slots, so that each seam has
 * a fair chance in the short profile: a burst over the rate limit, held charges, the provider
 * down (with a second tab and a reconciliation during it), a PostgreSQL restart, and an
 * operator re-driving every unfinished key.
 */
export async function runAttack(parts: AttackParts): Promise<void> {
  const { deployment, journal, profile, random } = parts;
  const start = Date.now();
  const until = start + profile.attackSeconds * 1000;
  const ctx: ShopContext = { deployment, journal, until };
  const accounts = deployment.accounts;
  // The first three accounts are the scripted ones, the last ones the 3-D Secure shoppers' (so the
  // crowd's rate limit does not turn their return into a 429); the others shop at random.
  const crowd = accounts.slice(3, accounts.length - profile.challengers);
  const authenticating = accounts.slice(accounts.length - profile.challengers);
  if (crowd.length === 0) throw new Error("the checker needs accounts beyond the three scripted ones");
  const shoppers = Array.from({ length: profile.shoppers }, (_, i) =>
    shopAround(ctx, random.fork(`shopper-${i}`), random.pick(crowd)),
  );
  const challengeCtx = {
    ...ctx,
    returnBase: deployment.instances[0]?.url ?? "http://127.0.0.1",
    actionTimeoutSeconds: profile.actionTimeoutSeconds,
  };
  const challengers = Array.from({ length: profile.challengers }, (_, i) =>
    challengeLoop(challengeCtx, random.fork(`challenger-${i}`), authenticating[i] as ShopperAccount),
  );
  const background = [
    ...shoppers,
    ...challengers,
    authorizationLoop(deployment, random.fork("authorizer"), journal, until),
    operate(deployment, random.fork("operator"), journal, until),
    refundLoop(deployment, random.fork("refunder"), journal, until),
    rogueLoop(deployment, random.fork("rogue"), journal, until),
    monkeyLoop(deployment, random.fork("monkey"), journal, until),
    merchantLoop(deployment, parts.merchants, random.fork("merchants"), journal, until),
  ];
  const cycles: Promise<void>[] = [];
  for (let cycle = 0; start + (cycle + 1) * CYCLE_SECONDS * 1000 <= until + 1000; cycle++) {
    cycles.push(
      scriptedCycle(parts, ctx, random.fork(`cycle-${cycle}`), start + cycle * CYCLE_SECONDS * 1000),
    );
  }
  await Promise.all([...background, ...cycles]);
}

async function at(cycleStart: number, random: Random, fromFraction: number, toFraction: number) {
  const span = CYCLE_SECONDS * 1000;
  const when = cycleStart + random.int(Math.round(fromFraction * span), Math.round(toFraction * span));
  await sleep(Math.max(0, when - Date.now()));
}

async function scriptedCycle(parts: AttackParts, ctx: ShopContext, random: Random, cycleStart: number) {
  const { deployment, journal, proxy, plan, profile } = parts;
  const [greedy, holder, twoTabs] = deployment.accounts;
  if (!greedy || !holder || !twoTabs) throw new Error("the checker needs at least three accounts");
  const tasks: Promise<unknown>[] = [];

  // Over the rate limit: the shopper spends the account's minute at once, learns from one 429
  // how long the minute still runs, and pays again just before it ends: refused with a short
  // Retry-After, the shopper leaving at the first 429 each time.
  tasks.push(
    (async () => {
      const orders = await Promise.all(
        Array.from({ length: profile.paymentsPerMinute + 4 }, () => placeOrder(ctx, random, greedy)),
      );
      const [budget, probe, late] = [
        orders.slice(0, profile.paymentsPerMinute),
        orders[profile.paymentsPerMinute],
        orders.slice(profile.paymentsPerMinute + 1),
      ];
      const pay = (orderId: string | null | undefined) =>
        orderId
          ? payOrder(ctx, random, greedy, orderId, { card: "pm_card_visa", copies: 1, temper: IMPATIENT })
          : null;
      await Promise.all(budget.map(pay));
      const refused = await pay(probe);
      const retryAfter = Number(refused?.last?.status === 429 ? refused.last.retryAfter : Number.NaN);
      if (Number.isFinite(retryAfter)) await sleep(Math.max(0, (retryAfter - 3) * 1000));
      await Promise.all(late.map(pay));
    })(),
  );

  // Charge requests held past the app's timeout and delivered after the abandonment window.
  await at(cycleStart, random, 0.18, 0.3);
  plan.forceHolds += 3;
  tasks.push(
    Promise.all(
      [0, 1, 2].map(async () => {
        const orderId = await placeOrder(ctx, random, holder);
        if (orderId)
          await payOrder(ctx, random, holder, orderId, {
            card: "pm_card_visa",
            copies: 1,
            temper: IMPATIENT,
          });
      }),
    ),
  );

  // The provider down: payments, a second tab on the same order, and a reconciliation meanwhile.
  await at(cycleStart, random, 0.35, 0.45);
  const orderId = await placeOrder(ctx, random, twoTabs);
  const downFrom = Date.now();
  proxy.setDown(true);
  const during: Promise<unknown>[] = [];
  if (orderId) {
    during.push(
      (async () => {
        // The first tab's card will be declined once the provider is back, freeing the order
        // whatever the completer's timing; the second tab's key is left at `started` by a 409.
        await payOrder(ctx, random, twoTabs, orderId, {
          card: "pm_card_declined",
          copies: 1,
          temper: IMPATIENT,
        });
        await payOrder(ctx, random, twoTabs, orderId, { card: "pm_card_visa", copies: 1, temper: IMPATIENT });
      })(),
    );
  }
  during.push(reconcile(deployment, random, journal, {}));
  await sleep(8000);
  await Promise.all(during);
  proxy.setDown(false);
  journal.providerOutages.push({ from: downFrom, to: Date.now() });

  await at(cycleStart, random, 0.6, 0.7);
  await restartDatabase(deployment, journal);

  // After the abandonment window of everything above: an operator clears the unfinished list.
  await at(cycleStart, random, 0.78, 0.9);
  await redriveAll(deployment, random, journal);
  await Promise.all(tasks);
}
