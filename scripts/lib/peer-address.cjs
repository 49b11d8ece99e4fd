// Preloaded into `next start` by `npm start` and `npm run cluster` (NODE_OPTIONS=--require).
// Next keeps a client's X-Forwarded-For as it came (it sets the header only when absent), so a
// client talking to Next directly could name any address. Here every HTTP request gets the
// socket's peer appended, as a proxy does; server/auth/client-address.ts then counts
// TRUSTED_PROXY_HOPS entries from the right (docs/decisions/0064).
const http = require("node:http");

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function emitWithPeer(event, req, ...rest) {
  if (event === "request" && req && req.headers) {
    const peer = req.socket?.remoteAddress ?? "unknown";
    const sent = req.headers["x-forwarded-for"];
    req.headers["x-forwarded-for"] = sent ? `${sent}, ${peer}` : peer;
  }
  return emit.call(this, event, req, ...rest);
};
globalThis[Symbol.for("checkout.peer-address")] = true;
