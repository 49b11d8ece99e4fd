import http from "node:http";
import https from "node:https";

// The socket's peer, appended to X-Forwarded-For by the server itself, as a proxy does: Next keeps
// a client's header as it came (it sets one only when absent), so a client talking to Next
// directly could name any address. instrumentation.ts installs this in every server Next starts
// (`next start`, `npm start`, `npm run cluster`, a standalone `node server.js`), before the first
// request; server/auth/client-address.ts counts TRUSTED_PROXY_HOPS from the right (decisions 0064, 0145).

const INSTALLED = Symbol.for("checkout.peer-address");
const holder = globalThis as { [INSTALLED]?: boolean };

type Emit = (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;

function withPeer(emit: Emit): Emit {
  return function emitWithPeer(this: http.Server, event, ...args) {
    const req = args[0] as http.IncomingMessage | undefined;
    if (event === "request" && req?.headers) {
      const peer = req.socket?.remoteAddress;
      // A socket already gone has no address: nothing to answer, and no bucket to count it in.
      if (!peer) {
        req.socket?.destroy();
        return true;
      }
      const sent = req.headers["x-forwarded-for"];
      req.headers["x-forwarded-for"] = sent ? `${sent}, ${peer}` : peer;
    }
    return emit.call(this, event, ...args);
  };
}

/** Patches Node's HTTP(S) servers once per process; later calls do nothing. */
export function installPeerAddress(): void {
  if (holder[INSTALLED]) return;
  holder[INSTALLED] = true;
  for (const Server of [http.Server, https.Server]) {
    const proto = Server.prototype as unknown as { emit: Emit };
    proto.emit = withPeer(proto.emit);
  }
}

/** Whether this process appends the peer (a request's forwarded addresses can then be counted). */
export function peerAddressInstalled(): boolean {
  return holder[INSTALLED] === true;
}
