// Next calls register() once per server process, before its first request, whatever started it
// (`next start`, `npm start`, `npm run cluster`, a standalone `node server.js`): the place for what
// every entry point must do (decisions 0145, 0152). The Node.js part lives in its own module,
// imported under this exact condition so that the Edge build leaves it out.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startNodeServer } = await import("./server/lifecycle/node-server");
    await startNodeServer();
  }
}
