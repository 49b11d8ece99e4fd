/** Polls a health URL until it answers 200; throws after `timeoutMs`. */
export async function waitForHealth(url: string, timeoutMs = 60_000): Promise<void> {
  let last = "no answer";
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not healthy within ${timeoutMs} ms (${last})`);
}
