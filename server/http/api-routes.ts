import type { AnyTRPCRouter } from "@trpc/server";
import { db } from "../db";
import { paymentProvider } from "../provider";
import { checkLiveness, checkReadiness, healthResponse } from "./health";
import { metricsResponse } from "./metrics";
import { OPENAPI_PATH, openApiDocument } from "./openapi";
import { problemResponse } from "./problems";
import { handleProviderWebhook, PROVIDER_WEBHOOK_PATH } from "./provider-webhook";
import { handleRestRequest, REST_PREFIX } from "./rest-handler";
import { handleTrpcRequest, TRPC_ENDPOINT } from "./trpc-handler";

// The API's routes, answered by the same functions whether Next (app/api/**/route.ts) or the API
// tier (node-server.ts) received the request.

type Answer = (req: Request) => Promise<Response> | Response;

export const answerReadiness: Answer = async () => healthResponse(await checkReadiness());
export const answerLiveness: Answer = () => healthResponse(checkLiveness());
export const answerOpenApiDocument: Answer = () => Response.json(openApiDocument());
export const answerMetrics: Answer = (req) => metricsResponse(req, db());
export const answerProviderWebhook: Answer = (req) =>
  handleProviderWebhook(req, { prisma: db, provider: paymentProvider });
export const answerRest: Answer = (req) => handleRestRequest(req);
export const answerTrpc: Answer = (req) => handleTrpcRequest(req);

type Methods = Partial<Record<string, Answer>>;

const EXACT: Record<string, Methods> = {
  "/api/health": { GET: answerReadiness },
  "/api/health/ready": { GET: answerReadiness },
  "/api/health/live": { GET: answerLiveness },
  "/api/metrics": { GET: answerMetrics },
  [OPENAPI_PATH]: { GET: answerOpenApiDocument },
  [PROVIDER_WEBHOOK_PATH]: { POST: answerProviderWebhook },
};

/** The routes under a prefix; a test passes its own router to the tRPC and REST surfaces. */
function prefixed(pathname: string, router?: AnyTRPCRouter): Methods | undefined {
  if (pathname.startsWith(`${TRPC_ENDPOINT}/`)) {
    const trpc: Answer = router ? (req) => handleTrpcRequest(req, router) : answerTrpc;
    return { GET: trpc, POST: trpc };
  }
  if (pathname.startsWith(`${REST_PREFIX}/`)) {
    const rest: Answer = router ? (req) => handleRestRequest(req, router) : answerRest;
    return { GET: rest, POST: rest, PUT: rest, PATCH: rest, DELETE: rest };
  }
  return undefined;
}

/**
 * The API's answer to a request outside Next, as Next's router would give it: HEAD as GET, an
 * OPTIONS listing the methods, 405 for another method, 404 for a path with no route.
 */
export function routeApiRequest(req: Request, router?: AnyTRPCRouter): Promise<Response> | Response {
  const { pathname } = new URL(req.url);
  const methods = EXACT[pathname] ?? prefixed(pathname, router);
  if (!methods) return plainProblem(404, "Not Found", `No API route at ${pathname}.`);
  const answer = methods[req.method === "HEAD" ? "GET" : req.method];
  if (answer) return answer(req);
  const allow = [...Object.keys(methods), ...(methods.GET ? ["HEAD"] : []), "OPTIONS"].join(", ");
  if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: { allow } });
  return plainProblem(405, "Method Not Allowed", `${req.method} is not served here.`, { allow });
}

function plainProblem(status: number, title: string, detail: string, headers: HeadersInit = {}): Response {
  return problemResponse({ type: "about:blank", title, status, detail }, headers);
}
