// Evaluation of our own expression trees (never of strings): exact BigInt rationals where the
// tree allows it, otherwise numeric evaluation with mathjs functions (real or complex).
// Every node evaluated and every big-number step is charged to the work budget (budget.ts), so a
// pathological answer cannot stall scoring.
import type { Complex, MathType } from 'mathjs';

// mathjs builds its typed functions when it loads (~150 ms): load it on the first numeric
// evaluation instead of at start-up, so the CLI, the worker threads and the extension start fast
// and never pay for it on groups whose answers are all exact rationals.
type MathJs = typeof import('mathjs');
let mathjs: MathJs | undefined;
const mj = (): MathJs => mathjs ?? loadMathJs();

/** Loads mathjs once. Loading is not work on an answer: it is charged nothing (the budget counts work, not time). */
function loadMathJs(): MathJs {
  mathjs = require('mathjs') as MathJs;
  return mathjs;
}
import type { Node } from './expression-tree';
import * as Q from './rational';
import type { Rational } from './rational';

import { budget } from './budget';
export { budget, BudgetError } from './budget';

export type Env = ReadonlyMap<string, Rational>;

/** Exact value, or null when the tree is not a rational (π, √2, variables without env, ...). */
export function exactEval(n: Node, env?: Env): Rational | null {
  budget.check();
  switch (n.k) {
    case 'num':
      return n.v;
    case 'var':
      return env?.get(n.name) ?? null;
    case 'neg': {
      const x = exactEval(n.x, env);
      return x && Q.neg(x);
    }
    case 'add':
    case 'sub':
    case 'mul':
    case 'div': {
      const a = exactEval(n.a, env);
      if (!a) return null;
      const b = exactEval(n.b, env);
      if (!b) return null;
      if (n.k === 'add') return Q.add(a, b);
      if (n.k === 'sub') return Q.sub(a, b);
      if (n.k === 'mul') return Q.mul(a, b);
      return Q.div(a, b);
    }
    case 'pow':
      return exactPow(n.a, n.b, env);
    case 'group':
      return n.items.length === 1 ? exactEval(n.items[0]!, env) : null;
    case 'fn':
      return exactFn(n.f, n.args, env);
    default:
      return null;
  }
}

function exactPow(baseNode: Node, expNode: Node, env?: Env): Rational | null {
  const a = exactEval(baseNode, env);
  const b = a && exactEval(expNode, env);
  if (!a || !b) return null;
  // a^(p/q) = (q-th root of a)^p when the root is exact.
  if (b.d > 64n) return null;
  const root = b.d === 1n ? a : Q.ratRoot(a, Number(b.d));
  return root && Q.powInt(root, b.n);
}

const MAX_EXACT_FACTORIAL = 1000n;

function exactFn(f: string, args: Node[], env?: Env): Rational | null {
  const xs: Rational[] = [];
  for (const a of args) {
    const v = exactEval(a, env);
    if (!v) return null;
    xs.push(v);
  }
  const x = xs[0]!;
  switch (f) {
    case 'sqrt': {
      const k = xs[1] ?? Q.rat(2n);
      return Q.isInteger(k) && k.n > 0n && k.n <= 64n ? Q.ratRoot(x, Number(k.n)) : null;
    }
    case 'abs':
      return x.n < 0n ? Q.neg(x) : x;
    case 'fact':
      return Q.isInteger(x) && x.n >= 0n && x.n <= MAX_EXACT_FACTORIAL ? Q.rat(factorial(x.n)) : null;
    case 'binom': {
      const k = xs[1]!;
      if (!Q.isInteger(x) || !Q.isInteger(k) || x.n < 0n || x.n > 5_000n) return null;
      return Q.rat(binom(x.n, k.n));
    }
    case 'floor':
    case 'ceil': {
      const fl = x.n >= 0n ? x.n / x.d : -((-x.n + x.d - 1n) / x.d);
      return Q.rat(f === 'floor' || Q.isInteger(x) ? fl : fl + 1n);
    }
    case 'log':
    case 'log10':
    case 'ln':
    case 'exp':
      return exactLog(f, x, xs[1]);
    default:
      return null;
  }
}

/** log_b(x) when x is an exact integer power of b; ln 1 = 0; exp 0 = 1. */
function exactLog(f: string, x: Rational, base?: Rational): Rational | null {
  if (f === 'exp') return x.n === 0n ? Q.ONE : null;
  if (x.n === 1n && x.d === 1n) return Q.ZERO;
  if (f === 'ln') return null;
  const b = f === 'log10' ? Q.rat(10n) : base;
  if (!b || b.n <= 0n || Q.eq(b, Q.ONE) || x.n <= 0n) return null;
  // Float estimate of the exponent, then an exact check: b^p = x^q for small q (log_4 2 = 1/2).
  const est = Math.log(Math.abs(Q.toNumber(x))) / Math.log(Math.abs(Q.toNumber(b)));
  if (!Number.isFinite(est) || Math.abs(est) > 4096) return null;
  for (let q = 1; q <= 6; q++) {
    const p = Math.round(est * q);
    if (Math.abs(est * q - p) > 1e-6) continue;
    const lhs = Q.powInt(b, BigInt(p));
    const rhs = Q.powInt(x, BigInt(q));
    if (lhs && rhs && Q.eq(lhs, rhs)) return Q.rat(BigInt(p), BigInt(q));
  }
  return null;
}

/** Bits of a small positive integer (below 2^31). */
const smallBits = (i: bigint): number => 32 - Math.clz32(Number(i));

function factorial(n: bigint): bigint {
  let r = 1n;
  // The product's bits are at most the sum of its factors' bits: each step costs the limbs so far.
  let bits = 1;
  for (let i = 2n; i <= n; i++) {
    bits += smallBits(i);
    Q.chargeLimbs(Math.ceil(bits / 64));
    r *= i;
  }
  return r;
}

function binom(n: bigint, k: bigint): bigint {
  if (k < 0n || k > n) return 0n;
  if (k > n - k) k = n - k;
  let r = 1n;
  // r = C(n-k+i, i) after step i: bits(r·m / i) <= bits(r) + bits(m) - bits(i) + 1.
  let bits = 1;
  for (let i = 1n; i <= k; i++) {
    const m = n - k + i;
    // A product by m, then a division by i, of a value of at most bits + bits(m) bits.
    Q.chargeLimbs(2 * Math.ceil((bits + smallBits(m)) / 64));
    bits += smallBits(m) - smallBits(i) + 1;
    r = (r * m) / i;
  }
  return r;
}

// ---------------------------------------------------------------- numeric evaluation

export type Num = number | Complex;
export type NumEnv = ReadonlyMap<string, number>;

export class ExpressionError extends Error {}

const CONSTS: Record<string, Num> = { pi: Math.PI, e: Math.E, inf: Infinity };

/** Numeric value (mathjs arithmetic; complex where needed). Throws ExpressionError if not a scalar. */
export function numEval(n: Node, env?: NumEnv): Num {
  budget.check();
  switch (n.k) {
    case 'num':
      return Q.toNumber(n.v);
    case 'float':
      return n.v;
    case 'const':
      return n.c === 'i' ? mj().complex(0, 1) : CONSTS[n.c]!;
    case 'var': {
      const v = env?.get(n.name);
      if (v === undefined) throw new ExpressionError(`free variable ${n.name}`);
      return v;
    }
    // Real operands use JS arithmetic (what mathjs does for numbers); mathjs, loaded on demand,
    // handles complex values.
    case 'neg': {
      const x = numEval(n.x, env);
      return typeof x === 'number' ? -x : (mj().unaryMinus(x) as Num);
    }
    case 'add': {
      const a = numEval(n.a, env);
      const b = numEval(n.b, env);
      return typeof a === 'number' && typeof b === 'number' ? a + b : (mj().add(a as MathType, b as MathType) as Num);
    }
    case 'sub': {
      const a = numEval(n.a, env);
      const b = numEval(n.b, env);
      return typeof a === 'number' && typeof b === 'number' ? a - b : (mj().subtract(a as MathType, b as MathType) as Num);
    }
    case 'mul': {
      const a = numEval(n.a, env);
      const b = numEval(n.b, env);
      return typeof a === 'number' && typeof b === 'number' ? a * b : (mj().multiply(a as MathType, b as MathType) as Num);
    }
    case 'div': {
      const a = numEval(n.a, env);
      const b = numEval(n.b, env);
      return typeof a === 'number' && typeof b === 'number' ? a / b : (mj().divide(a as MathType, b as MathType) as Num);
    }
    case 'pow':
      return numPow(numEval(n.a, env), numEval(n.b, env));
    case 'group':
      if (n.items.length !== 1) throw new ExpressionError('not a scalar');
      return numEval(n.items[0]!, env);
    case 'fn':
      return numFn(n.f, n.args.map((a) => numEval(a, env)));
    default:
      throw new ExpressionError(`not a scalar: ${n.k}`);
  }
}

function numPow(a: Num, b: Num): Num {
  // Real powers that stay real: JS arithmetic, as mathjs computes them for numbers.
  if (typeof a === 'number' && typeof b === 'number' && (a >= 0 || Number.isInteger(b))) return Math.pow(a, b);
  // A real odd root of a negative real (-8)^(1/3) = -2, as a reader expects.
  if (typeof a === 'number' && typeof b === 'number' && a < 0 && !Number.isInteger(b)) {
    const inv = 1 / b;
    if (Number.isInteger(Math.round(inv)) && Math.abs(inv - Math.round(inv)) < 1e-12 && Math.round(inv) % 2 !== 0) {
      return -Math.pow(-a, b);
    }
  }
  return mj().pow(a as MathType, b as number | Complex) as Num;
}

function real(x: Num, what: string): number {
  if (typeof x === 'number') return x;
  if (Math.abs(x.im) > 1e-12 * Math.max(1, Math.abs(x.re))) throw new ExpressionError(`${what} of a complex value`);
  return x.re;
}

/** Real functions on their real domain, computed as mathjs computes them for numbers. */
const REAL_FN: Record<string, [(x: number) => number, (x: number) => boolean]> = {
  sqrt: [Math.sqrt, (x) => x >= 0],
  abs: [Math.abs, () => true],
  ln: [Math.log, (x) => x >= 0],
  log10: [Math.log10, (x) => x >= 0],
  exp: [Math.exp, () => true],
  sin: [Math.sin, () => true],
  cos: [Math.cos, () => true],
  tan: [Math.tan, () => true],
  sec: [(x) => 1 / Math.cos(x), () => true],
  csc: [(x) => 1 / Math.sin(x), () => true],
  cot: [(x) => 1 / Math.tan(x), () => true],
  arcsin: [Math.asin, (x) => x >= -1 && x <= 1],
  arccos: [Math.acos, (x) => x >= -1 && x <= 1],
  arctan: [Math.atan, () => true],
  arccot: [(x) => Math.atan(1 / x), () => true],
  sinh: [Math.sinh, () => true],
  cosh: [Math.cosh, () => true],
  tanh: [Math.tanh, () => true],
};

function numFn(f: string, xs: Num[]): Num {
  const x = xs[0]!;
  const realFn = REAL_FN[f];
  if (realFn && xs.length === 1 && typeof x === 'number' && realFn[1](x)) return realFn[0](x);
  const M = x as number; // mathjs functions accept number | Complex; typed via this alias
  switch (f) {
    case 'sqrt': {
      if (xs.length === 1) return mj().sqrt(M) as Num;
      const k = real(xs[1]!, 'root index');
      if (typeof x === 'number' && Number.isInteger(k) && k > 0) return mj().nthRoot(x, k) as number;
      return numPow(x, 1 / k);
    }
    case 'abs':
      return mj().abs(M) as number;
    case 'fact': {
      const r = real(x, 'factorial');
      if (r > 170) return Infinity;
      return Number.isInteger(r) && r >= 0 ? (mj().gamma(r + 1) as number) : (mj().gamma(r + 1) as number);
    }
    case 'binom': {
      const n = real(x, 'binomial');
      const k = real(xs[1]!, 'binomial');
      if (Number.isInteger(n) && Number.isInteger(k) && n >= k && k >= 0 && n < 1030) {
        // mathjs multiplies min(k, n-k) factors: one unit per 16 of them (budget.ts).
        budget.charge(Math.ceil(Math.min(k, n - k) / 16));
        return mj().combinations(n, k) as number;
      }
      return (mj().gamma(n + 1) as number) / ((mj().gamma(k + 1) as number) * (mj().gamma(n - k + 1) as number));
    }
    case 'floor':
      return mj().floor(real(x, 'floor'));
    case 'ceil':
      return mj().ceil(real(x, 'ceil'));
    case 'log':
      return mj().divide(mj().log(M) as MathType, mj().log(xs[1] as number) as MathType) as Num;
    case 'log10':
      return mj().divide(mj().log(M) as MathType, Math.LN10) as Num;
    case 'ln':
      return mj().log(M) as Num;
    case 'exp':
      return mj().exp(M) as Num;
    case 'sin':
      return mj().sin(M);
    case 'cos':
      return mj().cos(M);
    case 'tan':
      return mj().tan(M);
    case 'sec':
      return mj().sec(M);
    case 'csc':
      return mj().csc(M);
    case 'cot':
      return mj().cot(M);
    case 'arcsin':
      return mj().asin(M) as Num;
    case 'arccos':
      return mj().acos(M) as Num;
    case 'arctan':
      return mj().atan(M);
    case 'arcsec':
      return mj().asec(M) as Num;
    case 'arccsc':
      return mj().acsc(M) as Num;
    case 'arccot':
      return mj().acot(M);
    case 'sinh':
      return mj().sinh(M);
    case 'cosh':
      return mj().cosh(M);
    case 'tanh':
      return mj().tanh(M);
    default:
      throw new ExpressionError(`unknown function ${f}`);
  }
}

/** Real and imaginary parts of a numeric value. */
export function parts(x: Num): [number, number] {
  return typeof x === 'number' ? [x, 0] : [x.re, x.im];
}
