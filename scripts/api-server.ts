import { db } from "../server/db";
import { createApiServer } from "../server/http/node-server";
import { startCounterFlush } from "../server/keys";
import { onStopSignal } from "./lib/stop-signal";

// The API without Next, for integration tests that start and SIGKILL a real server process.
// Like a web server with BACKGROUND_JOBS=off, it flushes its own outcome counters (and once more
// on SIGTERM). Prints one line `api listening on http://127.0.0.1:<port>` when ready.
const server = createApiServer();
const stopFlush = startCounterFlush(db());
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object")
    console.log(`api listening on http://127.0.0.1:${address.port}`);
});
onStopSignal(() => server.close(() => void stopFlush().then(() => process.exit(0))));
