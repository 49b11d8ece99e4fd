/**
 * Merchants' webhook receivers for the chaos checker: one process serves the receivers named in
 * CHAOS_RECEIVERS (JSON), each on its own port. Every request is appended to its receiver's file
 * before anything is answered, so a SIGKILL loses no record; a held answer is recorded again just
 * before it is written, so whatever 2xx the app saw, a line says so.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import { type ReceiverAnswer, receiverAnswer } from "./faults";
import { Random } from "./random";
import { type ReceiverRecord, type ReceiverSpec, receiverFile } from "./receiver-records";

const specs = JSON.parse(process.env.CHAOS_RECEIVERS ?? "[]") as ReceiverSpec[];
const dir = process.env.CHAOS_RECEIVER_DIR ?? ".data/chaos/receivers";
const goneAfterMs = Number(process.env.CHAOS_RECEIVER_GONE_AFTER_MS ?? 40_000);
const deliveryTimeoutMs = Number(process.env.CHAOS_RECEIVER_DELIVERY_TIMEOUT_MS ?? 2_000);
const seed = Number(process.env.CHAOS_RECEIVER_SEED ?? 1);
const started = Date.now();
mkdirSync(dir, { recursive: true });

const header = (req: http.IncomingMessage, name: string) => {
  const v = req.headers[name];
  return typeof v === "string" ? v : null;
};

function serve(spec: ReceiverSpec) {
  const random = new Random(seed).fork(spec.name);
  const file = receiverFile(dir, spec.name);
  const record = (r: ReceiverRecord) => appendFileSync(file, `${JSON.stringify(r)}\n`);
  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(req.url === "/ready" ? 200 : 404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = header(req, "webhook-id");
      const answer: ReceiverAnswer = receiverAnswer(spec.mode, random, {
        sinceStartMs: Date.now() - started,
        goneAfterMs,
        deliveryTimeoutMs,
      });
      record({
        kind: "request",
        receiver: spec.name,
        path: req.url ?? "",
        host: header(req, "host") ?? "",
        localAddress: req.socket.localAddress ?? "",
        receivedAt: Date.now(),
        id,
        timestamp: header(req, "webhook-timestamp"),
        signature: header(req, "webhook-signature"),
        body: Buffer.concat(chunks).toString("utf8"),
        status: answer.holdMs > 0 ? null : answer.status,
      });
      const write = () => {
        if (answer.holdMs > 0)
          record({ kind: "answer", receiver: spec.name, id, at: Date.now(), status: answer.status });
        res.writeHead(answer.status, answer.retryAfter ? { "retry-after": answer.retryAfter } : {});
        res.end(answer.status === 204 ? undefined : `chaos ${spec.mode}`);
      };
      if (answer.holdMs > 0) setTimeout(write, answer.holdMs);
      else write();
    });
  });
  server.listen(spec.port, spec.host);
}

for (const spec of specs) serve(spec);
process.on("SIGTERM", () => process.exit(0));
