// Next calls register() once per server process. The Node.js part lives in its own module,
// imported under this exact condition so that the Edge build leaves it out.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startNodeServer } = await import("./server/lifecycle/node-server");
    await startNodeServer();
  }
}
