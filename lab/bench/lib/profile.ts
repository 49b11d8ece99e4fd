import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

// A V8 CPU profile (`node --cpu-prof`) summed by self time, by package and by function, per
// request. A bundle's frames are mapped back to their sources through its linked source map.

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The microsecond clock V8's profiler stamps samples with (CLOCK_MONOTONIC). */
export const profilerClock = () => Number(process.hrtime.bigint() / 1000n);

/** Where a frame's code comes from: a package, node's own, V8's (GC, program), or ours (a folder). */
function origin(source: string, name: string): string {
  if (source === "") return name.startsWith("(") ? name : "(native)";
  if (source.startsWith("node:")) return "node";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (pkg) return pkg[1] as string;
  const ours = /\/work\/[^/]+\/[^/]+\/([^/]+)\//.exec(source) ?? /^(?:\.\.\/)*([^/]+)\//.exec(source);
  return ours ? `ours: ${ours[1]}` : source;
}

/**
 * Prints where the profiled process spent its CPU between `from` and `to` (profilerClock
 * readings), as ms per request: the top packages and the top functions by self time.
 */
export function summarizeProfile(
  file: string,
  requests: number,
  from = 0,
  to = Infinity,
  top = 25,
  callersOf?: string,
): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string) => {
    if (!maps.has(url)) {
      const path = url.startsWith("file://") ? fileURLToPath(url) : url;
      maps.set(
        url,
        path.endsWith(".mjs") && existsSync(`${path}.map`)
          ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8")))
          : null,
      );
    }
    return maps.get(url) ?? null;
  };
  const frames = new Map<number, { where: string; fn: string }>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    let source = url;
    let line = lineNumber;
    const map = url ? mapOf(url) : null;
    if (map && lineNumber >= 0) {
      const entry = map.findEntry(lineNumber, columnNumber) as {
        originalSource?: string;
        originalLine?: number;
      };
      if (entry.originalSource) {
        source = entry.originalSource;
        line = entry.originalLine ?? line;
      }
    }
    const where = origin(source, functionName);
    const file = source.split("/").slice(-2).join("/");
    frames.set(node.id, { where, fn: `${functionName || "(anonymous)"} ${file}:${line + 1}` });
  }
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number, depth: number) => {
    const out: string[] = [];
    for (let at = parent.get(id); at !== undefined && out.length < depth; at = parent.get(at))
      out.push(frames.get(at)?.fn ?? "?");
    return out.join(" ← ");
  };
  const callers = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let t = profile.startTime;
  let busy = 0;
  for (const [i, id] of profile.samples.entries()) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < from || t > to) continue;
    const frame = frames.get(id);
    if (!frame || frame.where === "(idle)") continue;
    const dt = profile.timeDeltas[i + 1] ?? 0; // a sample stands for the time until the next one
    busy += dt;
    byOrigin.set(frame.where, (byOrigin.get(frame.where) ?? 0) + dt);
    const key = `${frame.where} · ${frame.fn}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + dt);
    if (callersOf && frame.fn.startsWith(callersOf)) {
      const stack = stackOf(id, 8);
      callers.set(stack, (callers.get(stack) ?? 0) + dt);
    }
  }
  const perRequest = (us: number) => (us / 1000 / requests).toFixed(3);
  console.log(`\nprofile ${file}: ${perRequest(busy)} ms busy per request (sampled, not idle)`);
  console.log("| where | ms per request | share |\n|---|---|---|");
  for (const [where, us] of [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${where} | ${perRequest(us)} | ${((100 * us) / busy).toFixed(1)} % |`);
  console.log("\n| function (self time) | ms per request | share |\n|---|---|---|");
  for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${fn} | ${perRequest(us)} | ${((100 * us) / busy).toFixed(1)} % |`);
  if (callersOf) {
    console.log(`\ncallers of ${callersOf} (8 frames up), ms per request`);
    for (const [stack, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 12))
      console.log(`${perRequest(us)}  ${stack}`);
  }
}
