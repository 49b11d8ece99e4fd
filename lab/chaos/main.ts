/**
 * `npm run chaos`: the whole product as deployed, attacked at random from a printed seed, then
 * checked against the provider's books and ours (lab/chaos/README.md). Exits 1 on any violation.
 */
import { runAttack } from "./attack";
import { buildApp, startDeployment } from "./deployment";
import { startFaultProxy } from "./fault-proxy";
import { FaultPlan } from "./faults";
import { type Evidence, INVARIANTS } from "./invariants";
import { Journal } from "./journal";
import { type Merchants, startMerchants } from "./merchants";
import { parseProfile, USAGE } from "./profile";
import { Random } from "./random";
import { printReport, writeViolations } from "./report";
import { settleAndRead } from "./settle";

let profile: ReturnType<typeof parseProfile>;
try {
  profile = parseProfile(process.argv.slice(2));
} catch (error) {
  console.error(`${error instanceof Error ? error.message : error}\n${USAGE}`);
  process.exit(2);
}
const started = Date.now();
console.log(
  `chaos: seed ${profile.seed} (replay with: npm run chaos -- --seed ${profile.seed}${profile.name === "long" ? ` --minutes ${profile.attackSeconds / 60}` : ""}${profile.deployment === "api" ? " --deployment api" : ""})`,
);
if (process.env.DATABASE_URL || process.env.PAYMENT_PROVIDER_URL) {
  console.log("chaos: DATABASE_URL / PAYMENT_PROVIDER_URL ignored: the checker runs a deployment of its own");
  delete process.env.DATABASE_URL;
  delete process.env.DIRECT_DATABASE_URL;
  delete process.env.PAYMENT_PROVIDER_URL;
}

const random = new Random(profile.seed);
const journal = new Journal();
const plan = new FaultPlan(random.fork("faults"), profile);
// The API tier runs from the sources: only `next start` needs the build.
if (profile.build && profile.deployment === "next") {
  console.log("chaos: next build");
  buildApp();
}
console.log("chaos: starting the deployment");
const deployment = await startDeployment({
  profile,
  proxy: (target) =>
    startFaultProxy({
      target,
      decide: (m, p) => plan.decide(m, p),
      onFault: (k, paymentId) => journal.recordFault(k, paymentId),
    }),
});
let exitCode = 1;
let merchants: Merchants | null = null;
try {
  merchants = await startMerchants(deployment, profile, journal, random.fork("merchants"), deployment.logDir);
  console.log(
    `chaos: ${journal.merchants.endpoints.length} merchant webhook endpoints (${journal.merchants.endpoints.filter((e) => e.forbidden).length} at forbidden addresses), their receivers up`,
  );
  console.log(
    `chaos: ${deployment.instances.length} ${profile.deployment === "next" ? "next start" : "API-tier"} instances, the worker, the provider${deployment.pooled ? ", PgBouncer" : ""}; attacking for ${profile.attackSeconds} s`,
  );
  await runAttack({
    deployment,
    proxy: deployment.proxy,
    plan,
    journal,
    profile,
    random: random.fork("attack"),
    merchants,
  });
  console.log("chaos: attack over; settling and reading the books");
  const books = await settleAndRead({
    deployment,
    proxy: deployment.proxy,
    journal,
    profile,
    random: random.fork("settle"),
    merchants,
  });
  const evidence: Evidence = { journal, books, rogueIds: new Set(journal.rogue.map((r) => r.chargeId)) };
  const violations = INVARIANTS.flatMap((i) => i.check(evidence));
  printReport({
    journal,
    books,
    invariants: INVARIANTS.map((i) => i.name),
    violations,
    seconds: Math.round((Date.now() - started) / 1000),
    seed: profile.seed,
    profile: profile.name,
  });
  writeViolations(".data/chaos/violations.txt", violations);
  console.log("chaos: every violation is listed in .data/chaos/violations.txt");
  exitCode = violations.length === 0 ? 0 : 1;
} catch (error) {
  console.error("chaos: the run itself failed:", error);
  console.log("violations: unknown (the run did not finish)");
} finally {
  await merchants?.stop();
  await deployment.stop();
}
process.exit(exitCode);
