import type { Deployment } from "./deployment";
import type { Journal } from "./journal";
import type { Restartable } from "./processes";
import type { Random } from "./random";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processes between their kill and their start: a second killer leaves them to the first. */
const restarting = new Set<Restartable>();

/** SIGKILL, a pause, and a start again, as a supervisor (systemd, Kubernetes) would. */
export async function killAndRestart(proc: Restartable, journal: Journal, random: Random) {
  if (!proc.alive() || restarting.has(proc)) return;
  restarting.add(proc);
  try {
    journal.count(journal.kills, proc.name.startsWith("app") ? "app instance" : proc.name);
    await proc.kill();
    await sleep(random.int(500, 3000));
    await proc.start();
    journal.count(journal.restarts, proc.name.startsWith("app") ? "app instance" : proc.name);
  } finally {
    restarting.delete(proc);
  }
}

/** PostgreSQL stopped (fast shutdown) and started again; every connection breaks. */
export async function restartDatabase(deployment: Deployment, journal: Journal) {
  const from = Date.now();
  await deployment.restartDatabase();
  journal.databaseOutages.push({ from, to: Date.now() });
  journal.count(journal.restarts, "postgresql");
}

/** Kills at random until the attack ends; one app instance down at a time, so shoppers get through. */
export async function monkeyLoop(deployment: Deployment, random: Random, journal: Journal, until: number) {
  while (Date.now() < until) {
    await sleep(random.int(6000, 15_000));
    if (Date.now() >= until) return;
    const roll = random.int(1, 100);
    if (roll <= 55) await killAndRestart(random.pick(deployment.instances), journal, random);
    else await killAndRestart(deployment.worker, journal, random);
  }
}
