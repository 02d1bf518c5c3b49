// One key style for every JSON the command prints (score, report, health): snake_case, as the
// score line of docs/contract.md#command-line. The engine's records are camelCase; they are converted on output only.

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A deep copy with every object key in snake_case (arrays and values unchanged). */
export function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[snake(k)] = snakeKeys(x);
  return out;
}
