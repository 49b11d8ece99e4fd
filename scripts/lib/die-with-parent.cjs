// Preloaded into child Node processes (NODE_OPTIONS=--require): exit when the orchestrating
// process is gone, even after a SIGKILL that gave it no chance to stop us.
const parent = Number(process.env.CHECKOUT_PARENT_PID);
if (parent > 0 && parent !== process.pid) {
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(1);
    }
  }, 1000);
  timer.unref();
}
