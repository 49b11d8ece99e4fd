import { createApiServer } from "../server/http/node-server";

// The API without Next, for integration tests that start and SIGKILL a real server process.
// Prints one line `api listening on http://127.0.0.1:<port>` when ready.
const server = createApiServer();
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object")
    console.log(`api listening on http://127.0.0.1:${address.port}`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => server.close(() => process.exit(0)));
