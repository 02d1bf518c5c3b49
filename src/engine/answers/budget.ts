// The bounds of one parse or one comparison (docs/answers.md, "Time and size bounds"): a time
// budget polled in every tree walk and in big-number loops, a cap on the nodes a parse may build
// (substituted copies of a `\sum` body count), a cap on the size of an exact operand. Hitting any
// of them throws a `TimeoutError`: the answer reads as text (parse) or the pair is not decided
// (comparison), never a hang.

export class TimeoutError extends Error {}

/** A deterministic bound (nodes, operand bits) was hit: the same as running out of time. */
export class BudgetError extends TimeoutError {}

/** Nodes one parsed answer may hold, substituted `\sum`/`\prod` terms and evaluated matrix entries included. */
export const MAX_NODES = 20_000;

/** Bits of an exact operand (numerator or denominator); 1000! has 8,530. */
export const MAX_BITS = 16_384;

/** The per-comparison deadline (SPEC §3.2 time bound). */
export const budget = {
  deadline: Infinity,
  ticks: 0,
  start(ms: number): void {
    this.deadline = performance.now() + ms;
    this.ticks = 0;
  },
  check(): void {
    if ((++this.ticks & 63) === 0 && performance.now() > this.deadline) throw new TimeoutError('time budget exceeded');
  },
};

const SIZE = new WeakMap<object, number>();

/**
 * Nodes of the tree `n` when every shared subtree is counted once per use (what a walk visits),
 * memoised per node so a DAG costs its distinct nodes once. Throws a BudgetError above MAX_NODES.
 */
export function treeSize(n: unknown): number {
  if (n === null || typeof n !== 'object') return 0;
  const hit = SIZE.get(n);
  if (hit !== undefined) return hit;
  budget.check();
  let s = 'k' in (n as object) ? 1 : 0;
  for (const v of Object.values(n as object)) {
    if (Array.isArray(v)) for (const x of v) s += treeSize(x);
    else if (v && typeof v === 'object' && 'k' in v) s += treeSize(v);
    if (s > MAX_NODES) throw new BudgetError(`more than ${MAX_NODES} nodes`);
  }
  SIZE.set(n, s);
  return s;
}
