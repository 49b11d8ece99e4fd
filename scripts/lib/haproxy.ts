import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertPortFree, startGuarded, waitForPort } from "./guarded-process";

/**
 * What HAProxy asks each instance. One place to change it: when the app has a readiness
 * endpoint (/api/health/ready), point this at it.
 */
export const HEALTH_CHECK_PATH = "/api/health";

export interface LoadBalancer {
  port: number;
  stop(): Promise<void>;
}

export interface LoadBalancerOptions {
  binary: string;
  port: number;
  /** The instances' ports on 127.0.0.1. */
  backends: number[];
  /** The API tier's ports: with any, every path under /api/ goes to them, the rest to `backends`. */
  apiBackends?: number[];
  healthPath?: string;
}

/**
 * HAProxy spreading HTTP requests round-robin over the instances that pass the health check
 * (every second; out after 2 failures, back after 1 success). Only a connection that never
 * reached an instance is retried elsewhere; anything else the client retries with its own
 * Idempotency-Key. Each answer names its instance in X-Served-By (app1…, api1…). With an API
 * tier, /api/ is routed to it by path: one origin for the browser (decision 0211).
 */
export async function startHaproxy(opts: LoadBalancerOptions): Promise<LoadBalancer> {
  await assertPortFree(opts.port, "haproxy");
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const config = join(dir, "haproxy.cfg");
  const api = opts.apiBackends ?? [];
  const backend = (name: string, server: string, ports: number[]) => [
    `backend ${name}`,
    "  balance roundrobin",
    `  option httpchk GET ${opts.healthPath ?? HEALTH_CHECK_PATH}`,
    "  http-check expect status 200",
    "  http-response set-header X-Served-By %s",
    "  default-server inter 1s fall 2 rise 1",
    ...ports.map((port, i) => `  server ${server}${i + 1} 127.0.0.1:${port} check`),
  ];
  const lines = [
    "global",
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  retries 2",
    "  option redispatch",
    "frontend checkout",
    `  bind :${opts.port}`,
    // The client's own X-Forwarded-For is dropped, then HAProxy adds the address it saw: the app
    // trusts exactly this one hop (TRUSTED_PROXY_HOPS=1).
    "  http-request del-header X-Forwarded-For",
    "  option forwardfor",
    ...(api.length > 0 ? ["  use_backend api if { path_beg /api/ }"] : []),
    "  default_backend instances",
    ...backend("instances", "app", opts.backends),
    ...(api.length > 0 ? backend("api", "api", api) : []),
  ];
  writeFileSync(config, `${lines.join("\n")}\n`);
  // -db: stay in the foreground, so the guard can stop it.
  const proc = startGuarded("haproxy", opts.binary, ["-db", "-f", config]);
  const stop = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(opts.port, proc);
  } catch (error) {
    await stop();
    throw new Error(`haproxy on port ${opts.port}: ${error instanceof Error ? error.message : error}`);
  }
  return { port: opts.port, stop };
}
