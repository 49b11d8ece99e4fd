import { describe, expect, it } from "vitest";
import { type BrowserStep, type BrowserWorld, ensureBrowser, planBrowser } from "./browser";

/** A machine with the locations faked: which browsers exist, who we are, what each step would do. */
function fakeMachine(m: {
  system?: boolean;
  playwright?: boolean;
  root?: boolean;
  apt?: boolean;
  downloadWorks?: boolean;
  aptWorks?: boolean;
  downloadExitsZero?: boolean;
}) {
  const state = { system: m.system ?? false, playwright: m.playwright ?? false };
  const ran: BrowserStep[] = [];
  const said: string[] = [];
  const world: BrowserWorld = {
    facts: () => ({
      systemChromium: state.system,
      playwrightChromium: state.playwright,
      isRoot: m.root ?? false,
      hasApt: m.apt ?? false,
    }),
    run(step) {
      ran.push(step);
      if (step === "download" && m.downloadWorks) state.playwright = true;
      if (step === "apt" && m.aptWorks) state.system = true;
      return step === "download" ? !!(m.downloadWorks || m.downloadExitsZero) : !!m.aptWorks;
    },
    say: (line) => said.push(line),
  };
  return { world, ran, said };
}

describe("npm test's browser", () => {
  it("uses a browser that is there and downloads nothing: Debian's first, else Playwright's own", () => {
    for (const [machine, browser] of [
      [{ system: true, playwright: true }, "system"],
      [{ system: true }, "system"],
      [{ playwright: true, root: true, apt: true }, "playwright"],
    ] as const) {
      const { world, ran } = fakeMachine(machine);
      expect(ensureBrowser(world)).toEqual({ ok: true, browser });
      expect(ran).toEqual([]);
    }
  });

  it("downloads Playwright's own where the download works", () => {
    const { world, ran } = fakeMachine({ root: true, apt: true, downloadWorks: true });
    expect(ensureBrowser(world)).toEqual({ ok: true, browser: "playwright" });
    expect(ran).toEqual(["download"]);
  });

  it("installs Debian's chromium as root with apt when the download fails (these machines)", () => {
    const { world, ran, said } = fakeMachine({ root: true, apt: true, aptWorks: true });
    expect(ensureBrowser(world)).toEqual({ ok: true, browser: "system" });
    expect(ran).toEqual(["download", "apt"]);
    expect(said.join("\n")).toMatch(/installing Debian's chromium/);
  });

  it("a download that exits 0 but leaves no browser falls through to apt", () => {
    const { world, ran } = fakeMachine({ root: true, apt: true, aptWorks: true, downloadExitsZero: true });
    expect(ensureBrowser(world)).toEqual({ ok: true, browser: "system" });
    expect(ran).toEqual(["download", "apt"]);
  });

  it("names exactly the one command to run when it cannot get a browser itself", () => {
    const cases = [
      [{ apt: true }, "sudo apt-get update && sudo apt-get install -y chromium", ["download"]],
      [{}, "npx playwright install chromium", ["download"]],
      [{ root: true }, "npx playwright install chromium", ["download"]],
      [{ root: true, apt: true }, "apt-get update && apt-get install -y chromium", ["download", "apt"]],
    ] as const;
    for (const [machine, command, steps] of cases) {
      const { world, ran } = fakeMachine(machine);
      const result = ensureBrowser(world);
      expect(result.ok, JSON.stringify(machine)).toBe(false);
      if (!result.ok) expect(result.message).toContain(`\n    ${command}\n`);
      expect(ran).toEqual(steps);
    }
  });

  it("tries each step once, whatever the facts say", () => {
    const facts = { systemChromium: false, playwrightChromium: false, isRoot: true, hasApt: true };
    expect(planBrowser(facts, new Set())).toEqual({ kind: "try", step: "download" });
    expect(planBrowser(facts, new Set(["download"]))).toEqual({ kind: "try", step: "apt" });
    expect(planBrowser(facts, new Set(["download", "apt"]))).toMatchObject({ kind: "give-up" });
  });
});
