import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium } from "@playwright/test";

/** Debian's Chromium: browser downloads are impossible on our machines, its package is not. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** What the machine has, as far as the browser tests care. */
export interface BrowserFacts {
  systemChromium: boolean;
  playwrightChromium: boolean;
  isRoot: boolean;
  hasApt: boolean;
}

/** The ways of getting a browser, tried in this order; each is tried at most once. */
export type BrowserStep = "download" | "apt";

export type BrowserPlan =
  | { kind: "use"; browser: "system" | "playwright" }
  | { kind: "try"; step: BrowserStep }
  | { kind: "give-up"; command: string };

/**
 * The next move, from what exists and what was already tried: a browser that is there is used
 * (Debian's first, as the Playwright config does); else Playwright's own download; else, as root
 * with apt, Debian's package; else the one command that would fix it.
 */
export function planBrowser(facts: BrowserFacts, tried: ReadonlySet<BrowserStep>): BrowserPlan {
  if (facts.systemChromium) return { kind: "use", browser: "system" };
  if (facts.playwrightChromium) return { kind: "use", browser: "playwright" };
  if (!tried.has("download")) return { kind: "try", step: "download" };
  if (facts.isRoot && facts.hasApt && !tried.has("apt")) return { kind: "try", step: "apt" };
  return { kind: "give-up", command: fixCommand(facts) };
}

export function fixCommand(facts: Pick<BrowserFacts, "isRoot" | "hasApt">): string {
  if (!facts.hasApt) return "npx playwright install chromium";
  const sudo = facts.isRoot ? "" : "sudo ";
  return `${sudo}apt-get update && ${sudo}apt-get install -y chromium`;
}

export interface BrowserWorld {
  facts(): BrowserFacts;
  /** Each returns whether the step succeeded; the facts are read again afterwards either way. */
  run(step: BrowserStep): boolean;
  say(line: string): void;
}

export type BrowserResult = { ok: true; browser: "system" | "playwright" } | { ok: false; message: string };

/** Makes sure the browser tests have a browser, getting one if it can. */
export function ensureBrowser(world: BrowserWorld): BrowserResult {
  const tried = new Set<BrowserStep>();
  for (;;) {
    const plan = planBrowser(world.facts(), tried);
    if (plan.kind === "use") return { ok: true, browser: plan.browser };
    if (plan.kind === "give-up") {
      const message =
        "No browser for the end-to-end tests: Playwright's own could not be downloaded" +
        (tried.has("apt") ? " and installing Debian's chromium failed" : "") +
        `.\nRun this, then \`npm test\` again:\n\n    ${plan.command}\n`;
      return { ok: false, message };
    }
    tried.add(plan.step);
    world.say(
      plan.step === "download"
        ? "No browser found: downloading Playwright's Chromium (npx playwright install chromium)"
        : "Playwright's download failed: installing Debian's chromium (apt-get install -y chromium)",
    );
    if (!world.run(plan.step)) world.say(`${plan.step === "download" ? "the download" : "apt-get"} failed`);
  }
}

/** The real machine. */
export const thisMachine: BrowserWorld = {
  facts: () => ({
    systemChromium: existsSync(SYSTEM_CHROMIUM),
    playwrightChromium: existsSync(chromium.executablePath()),
    isRoot: process.getuid?.() === 0,
    hasApt: existsSync("/usr/bin/apt-get"),
  }),
  run(step) {
    const run = (command: string, args: string[], env: Record<string, string>, timeoutMs: number) =>
      spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env }, timeout: timeoutMs })
        .status === 0;
    if (step === "download") {
      // An unreachable download host fails within seconds instead of waiting on a dead socket.
      return run(
        "node_modules/.bin/playwright",
        ["install", "chromium"],
        { PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT: "15000" },
        10 * 60_000,
      );
    }
    const apt = { DEBIAN_FRONTEND: "noninteractive" };
    return (
      run("apt-get", ["update"], apt, 10 * 60_000) &&
      run("apt-get", ["install", "-y", "chromium"], apt, 10 * 60_000)
    );
  },
  say: (line) => console.log(`[browser] ${line}`),
};

/** Launch options for the Playwright config: Debian's Chromium where it exists, Playwright's own otherwise. */
export function chromiumLaunchOptions(): { executablePath?: string; args?: string[] } {
  if (!existsSync(SYSTEM_CHROMIUM)) return {};
  return {
    executablePath: SYSTEM_CHROMIUM,
    // Without the background-networking flags Chromium floods a closed network with retries.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  };
}
