import type { Deployment } from "./deployment";
import type { Random } from "./random";

/** An HTTP answer, or null for none at all (refused or reset: a killed instance). */
export interface Answer {
  status: number | null;
  headers: Headers;
  body: Record<string, unknown> | null;
  instance: number;
}

const CLIENT_TIMEOUT_MS = 60_000;

/**
 * Calls one live instance, picked at random, as a load balancer would; with none alive (all
 * killed at once), waits for one. A shopper is not told which instance answered.
 */
export async function callApp(
  deployment: Deployment,
  random: Random,
  path: string,
  init: { method: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  let live = deployment.instances.filter((i) => i.alive());
  for (let waited = 0; live.length === 0 && waited < 30_000; waited += 200) {
    await new Promise((r) => setTimeout(r, 200));
    live = deployment.instances.filter((i) => i.alive());
  }
  const instance = live.length > 0 ? random.pick(live) : random.pick(deployment.instances);
  try {
    const res = await fetch(`${instance.url}${path}`, {
      method: init.method,
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: Record<string, unknown> | null = null;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    } catch {
      body = { unparsed: text.slice(0, 200) };
    }
    return { status: res.status, headers: res.headers, body, instance: instance.index };
  } catch {
    return { status: null, headers: new Headers(), body: null, instance: instance.index };
  }
}

/** An admin tRPC call (the admin pages' own procedures), with the admin token. */
export async function callAdmin(
  deployment: Deployment,
  random: Random,
  procedure: string,
  kind: "query" | "mutation",
  input: unknown,
): Promise<{ status: number | null; data: unknown; error: string | null }> {
  const auth = { authorization: `Bearer ${deployment.adminToken}` };
  const answer =
    kind === "query"
      ? await callApp(
          deployment,
          random,
          `/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`,
          {
            method: "GET",
            headers: auth,
          },
        )
      : await callApp(deployment, random, `/api/trpc/${procedure}`, {
          method: "POST",
          headers: auth,
          body: input,
        });
  const result = answer.body?.result as { data?: unknown } | undefined;
  const error = answer.body?.error as { message?: string } | undefined;
  return {
    status: answer.status,
    data: result?.data ?? null,
    error: error ? String(error.message) : answer.status === 200 ? null : `HTTP ${answer.status ?? "none"}`,
  };
}

/** The last segment of a problem's type URI ("card-declined"), or null. */
export function problemReason(body: Record<string, unknown> | null): string | null {
  const type = body?.type;
  return typeof type === "string" ? (type.split("/").pop() ?? null) : null;
}
