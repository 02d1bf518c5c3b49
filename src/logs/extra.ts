// What is kept of a record's `extra` (and a verl line's extra-info values): any JSON, but only to
// a bounded depth. JSON.parse reads any depth, but everything after it recurses — the structured
// clone that sends a group to a worker thread, JSON.stringify, the roll-out documents — and a
// value nested a few thousand levels deep overflows the stack there (the worker-pool paths
// failed on it with a RangeError and no output). Levels below MAX_EXTRA_DEPTH are replaced by a
// short string that says so; nothing we use lives that deep.

/** Objects and arrays nested deeper than this in `extra` are replaced by EXTRA_TOO_DEEP. */
export const MAX_EXTRA_DEPTH = 64;
export const EXTRA_TOO_DEEP = `[nested deeper than ${MAX_EXTRA_DEPTH} levels: not kept]`;

/**
 * `value` with every object or array below `limit` levels replaced by EXTRA_TOO_DEEP. Returns
 * `value` itself (no copy) when nothing is that deep; the recursion never goes below `limit`.
 */
export function boundDepth<T>(value: T, limit: number = MAX_EXTRA_DEPTH): T {
  return bound(value, 0, limit) as T;
}

function bound(v: unknown, depth: number, limit: number): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (depth >= limit) return EXTRA_TOO_DEEP;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const b = bound(v[i], depth + 1, limit);
      if (b !== v[i]) (out ??= v.slice())[i] = b;
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    const b = bound(x, depth + 1, limit);
    if (b !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = b;
  }
  return out ?? v;
}
