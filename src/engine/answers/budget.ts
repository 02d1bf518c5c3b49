// The bounds of one parse or one comparison (docs/answers.md, "Work and size bounds"): a budget
// of units of WORK, never of time, charged in every tree walk, every node evaluated, every parse
// step and every big-number operation (by operand size); a cap on the nodes a parse may build
// (substituted copies of a `\sum` body count) and on a tree's depth; a cap on the size of an exact
// operand. Hitting any of them throws a `BudgetError`: the answer reads as text (parse) or the pair
// is not decided (comparison). The count depends only on the answers, so the verdict is the same on
// any machine, at any load, in any thread; nothing here reads a clock.

/** A bound was hit: the work budget, the node or depth cap, or the operand size cap. */
export class BudgetError extends Error {}

/** Nodes one parsed answer may hold, substituted `\sum`/`\prod` terms and evaluated matrix entries included. */
export const MAX_NODES = 20_000;

/**
 * Depth of an expression tree (a level with list children counts 3: LISTED_LEVEL), and of the
 * parser's unary and exponent chains. Every tree walk recurses once per level, so this bounds the
 * stack a walk uses before any stack can overflow: the same answer is decided, or refused,
 * identically in a thread with a small stack and in one with a large one (docs/answers.md, "Work
 * and size bounds": 0.3 MB of stack was enough; Node gives its main thread ~1 MB, a worker 4 MB). A
 * `\sum` of 1000 terms is ~1000 deep.
 */
export const MAX_DEPTH = 1_100;

/** Bits of an exact operand (numerator or denominator); 1000! has 8,530. */
export const MAX_BITS = 16_384;

/**
 * Units of work one parse and one comparison may use (docs/answers.md, "Work and size bounds").
 * The largest decided parse of the answer suites uses ~89 K units (`\binom{5000}{2500}`), the
 * largest decided comparison ~87 K (the same against a number; solution sets judged point by point
 * ~15 K): over 10× below each budget. A budget spent cost ~50–70 ms on the shared 2-core machine
 * of BENCHMARKS.md ("Work budget of the answers") at a load of ~6, 3–4× that at 10–14.
 */
export const limits = { parseUnits: 1_000_000, compareUnits: 1_000_000 };

/** The work counter of the parse or comparison running now (one at a time per thread). */
export const budget = {
  units: 0,
  limit: Infinity,
  /** Test hook (see `setUnitHookForTests`): called with every charge. Never set in production. */
  onUnit: null as ((units: number) => void) | null,
  /** Charges `n` units; throws a BudgetError past the limit. */
  charge(n: number): void {
    this.units += n;
    if (this.onUnit !== null) this.onUnit(n);
    if (this.units > this.limit) throw new BudgetError(`over the work budget (${this.limit} units)`);
  },
  /** One unit: a node visited or evaluated, a parse step, a loop iteration. */
  check(): void {
    this.units++;
    if (this.onUnit !== null) this.onUnit(1);
    if (this.units > this.limit) throw new BudgetError(`over the work budget (${this.limit} units)`);
  },
};

/** What `run` returns, or the error it threw (a BudgetError when a bound was hit), with the units it used; the counter is then restored. */
export function withBudget<T>(limit: number, run: () => T): { value?: T; error?: unknown; units: number } {
  const saved = { units: budget.units, limit: budget.limit, shapes: SHAPE };
  budget.units = 0;
  budget.limit = limit;
  SHAPE = new WeakMap();
  try {
    return { value: run(), units: budget.units };
  } catch (e) {
    return { error: e, units: budget.units };
  } finally {
    budget.units = saved.units;
    budget.limit = saved.limit;
    SHAPE = saved.shapes;
  }
}

/** Installs (or removes, with null) a hook called with every charge: the tests slow each unit down with it. */
export function setUnitHookForTests(hook: ((units: number) => void) | null): void {
  budget.onUnit = hook;
}

/**
 * A value cached on an answer (a fingerprint, an exact value) is charged again, with the units its
 * computation used, each time it is read: a comparison costs the same whether or not another one
 * computed the value first, so the verdict does not depend on the order of comparisons.
 */
export class ChargedMemo<K extends object, V> {
  private readonly map = new WeakMap<K, { v: V; units: number }>();
  get(key: K, compute: () => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      budget.charge(hit.units);
      return hit.v;
    }
    const u0 = budget.units;
    const v = compute();
    this.map.set(key, { v, units: budget.units - u0 });
    return v;
  }
}

interface Shape {
  size: number;
  depth: number;
}

/** Shapes of the nodes seen by this parse or comparison (a fresh map for each: see withBudget). */
let SHAPE = new WeakMap<object, Shape>();

/** Children lists that came (at least partly) from an array field: see LISTED_LEVEL. */
const listed = new WeakSet<object[]>();

/**
 * The depth one level counts for. A walk reaches the items of an array field (a function's
 * arguments, a group's items) through a callback (`map`, `some`, `forEach`): about three stack
 * frames a level, against one for a node's own fields. Counting such a level as 3 bounds the stack
 * a walk needs by MAX_DEPTH whatever the tree's shape (a chain of 1,100 negations, or of 366 `!`).
 */
const LISTED_LEVEL = 3;

function isNode(v: unknown): v is object {
  return v !== null && typeof v === 'object' && 'k' in v;
}

/** The child nodes of a node: every node-valued field, array item and matrix entry. */
function childrenOf(n: object): object[] {
  const out: object[] = [];
  for (const v of Object.values(n)) {
    if (Array.isArray(v)) {
      listed.add(out);
      for (const x of v) {
        if (Array.isArray(x)) for (const y of x) isNode(y) && out.push(y);
        else if (isNode(x)) out.push(x);
      }
    } else if (isNode(v)) out.push(v);
  }
  return out;
}

/**
 * Nodes of the tree `n` when every shared subtree is counted once per use (what a walk visits),
 * and its depth; a DAG costs its distinct nodes once. Iterative (an explicit stack), so it measures
 * a tree of any depth without recursing. Throws a BudgetError above MAX_NODES or MAX_DEPTH.
 */
export function treeShape(root: object): Shape {
  const hit = SHAPE.get(root);
  if (hit !== undefined) {
    budget.check();
    return hit;
  }
  const stack: object[] = [root];
  while (stack.length > 0) {
    const n = stack[stack.length - 1]!;
    if (SHAPE.has(n)) {
      stack.pop();
      continue;
    }
    const kids = childrenOf(n);
    let ready = true;
    for (const c of kids) {
      if (!SHAPE.has(c)) {
        stack.push(c);
        ready = false;
      }
    }
    if (stack.length > MAX_DEPTH + MAX_NODES) throw new BudgetError(`more than ${MAX_NODES} nodes`);
    if (!ready) continue;
    stack.pop();
    budget.check();
    let size = 1;
    let depth = 0;
    for (const c of kids) {
      const s = SHAPE.get(c)!;
      size += s.size;
      if (s.depth > depth) depth = s.depth;
    }
    depth += listed.has(kids) ? LISTED_LEVEL : 1;
    if (size > MAX_NODES) throw new BudgetError(`more than ${MAX_NODES} nodes`);
    if (depth > MAX_DEPTH) throw new BudgetError(`nested more than ${MAX_DEPTH} deep`);
    SHAPE.set(n, { size, depth });
  }
  return SHAPE.get(root)!;
}

/** Nodes of the tree `n` as a walk visits them (treeShape). */
export function treeSize(n: object): number {
  return treeShape(n).size;
}
