/**
 * The one reader of database errors: an error's kind is told by its codes (SQLSTATE, errno, a
 * driver's code, a constraint's name), never by its message or its class. The codes may sit on
 * the error or on anything it wraps, depending on the driver that raised it.
 */

/**
 * Every object an error carries codes on, outermost first: the error, what it wraps (`cause`),
 * Prisma's `meta` and its `driverAdapterError`. Bounded, and safe against cycles.
 */
export function errorLayers(error: unknown): Record<string, unknown>[] {
  const seen = new Set<unknown>();
  const layers: Record<string, unknown>[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && layers.length < 32) {
    const e = queue.shift();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const o = e as Record<string, unknown>;
    layers.push(o);
    queue.push(o.cause, o.meta, o.driverAdapterError);
  }
  return layers;
}

/** A layer's SQLSTATE or driver code: node-postgres's `code`, or the `originalCode` of Prisma's adapter. */
export function codeOf(layer: Record<string, unknown>): string | undefined {
  const code = layer.code ?? layer.originalCode;
  return typeof code === "string" ? code : undefined;
}

/**
 * Which of `names` an error with SQLSTATE `sqlstate` names as its CONSTRAINT (node-postgres) or
 * DETAIL (Prisma's pg adapter keeps only the detail), on any of its layers.
 */
export function namedRefusal<T extends string>(
  error: unknown,
  sqlstate: string,
  names: readonly T[],
): T | undefined {
  for (const layer of errorLayers(error)) {
    if (codeOf(layer) !== sqlstate) continue;
    for (const name of [layer.constraint, layer.detail]) if (names.includes(name as T)) return name as T;
  }
  return undefined;
}
