import { authenticate, type Principal } from "./auth/authenticate";
import { type Db, db } from "./db";
import { env } from "./env";
import type { RequestObservation } from "./keys";
import type { PaymentProvider } from "./provider";

export interface Context {
  prisma: Db;
  principal: Principal;
  /** Request headers, for middlewares that read protocol headers such as Idempotency-Key. */
  reqHeaders: Headers;
  /** Response headers a procedure may add (Retry-After, Idempotent-Replayed). */
  resHeaders: Headers;
  /** The payment provider; tests may pass their own, the app uses the configured one. */
  provider?: PaymentProvider;
  /** How the call arrived: idempotent procedures refuse batches and streamed (jsonl) answers. */
  transport: { batched: boolean; streamed: boolean };
  /** What the request's log line reports beyond status and duration (the idempotency outcome). */
  observation: RequestObservation;
}

/** The context without HTTP: tests build it directly and call procedures through createCaller. */
export function createContextInner(opts: {
  prisma?: Db;
  principal?: Principal;
  reqHeaders?: Headers;
  resHeaders?: Headers;
  provider?: PaymentProvider;
  transport?: Context["transport"];
  observation?: RequestObservation;
}): Context {
  return {
    prisma: opts.prisma ?? db(),
    principal: opts.principal ?? { account: null, isAdmin: false },
    reqHeaders: opts.reqHeaders ?? new Headers(),
    resHeaders: opts.resHeaders ?? new Headers(),
    provider: opts.provider,
    transport: opts.transport ?? { batched: false, streamed: false },
    observation: opts.observation ?? {},
  };
}

export async function createContext(opts: {
  req: Request;
  resHeaders: Headers;
  info?: { isBatchCall: boolean; accept: string | null };
  observation?: RequestObservation;
  provider?: PaymentProvider;
}): Promise<Context> {
  const prisma = db();
  const principal = await authenticate(prisma, opts.req.headers, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  return createContextInner({
    prisma,
    principal,
    reqHeaders: opts.req.headers,
    resHeaders: opts.resHeaders,
    transport: {
      batched: opts.info?.isBatchCall ?? false,
      streamed: opts.info?.accept === "application/jsonl",
    },
    observation: opts.observation,
    provider: opts.provider,
  });
}
