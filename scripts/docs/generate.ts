/**
 * The docs the code knows: `npm run docs:generate` writes them, `npm run docs:check` (in
 * `npm run lint`) fails when one is stale or a decision record's front-matter is wrong.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderConfigurationDoc } from "./configuration";
import { checkDecisionLinks, parseDecision, RECORD_FILE, renderDecisionIndex } from "./decisions";

const root = path.resolve(import.meta.dirname, "../..");
const decisionsDir = path.join(root, "docs/decisions");

function decisionIndex(): string {
  const problems: string[] = [];
  const decisions = readdirSync(decisionsDir)
    .filter((file) => file !== "README.md")
    .flatMap((file) => {
      try {
        if (!RECORD_FILE.test(file)) throw new Error(`${file}: not named NNNN-words.md`);
        return [parseDecision(file, readFileSync(path.join(decisionsDir, file), "utf8"))];
      } catch (error) {
        problems.push((error as Error).message);
        return [];
      }
    });
  problems.push(...checkDecisionLinks(decisions));
  if (problems.length) throw new Error(`docs/decisions:\n  ${problems.join("\n  ")}`);
  return renderDecisionIndex(decisions);
}

const targets: Record<string, () => string | Promise<string>> = {
  "docs/decisions/README.md": decisionIndex,
  "docs/configuration.md": () =>
    renderConfigurationDoc(readFileSync(path.join(root, "docs/configuration.md"), "utf8")),
};

const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [file, render] of Object.entries(targets)) {
  let wanted: string;
  try {
    wanted = await render();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const target = path.join(root, file);
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {}
  if (current === wanted) continue;
  if (check) stale.push(file);
  else {
    writeFileSync(target, wanted);
    console.log(`wrote ${file}`);
  }
}
if (stale.length) {
  console.error(`stale: ${stale.join(", ")}; run \`npm run docs:generate\``);
  process.exit(1);
}
