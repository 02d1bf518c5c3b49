// Exact rationals on BigInt (docs/contract.md#answer-equivalence: "exact rationals compare exactly").
// Always normalised: gcd(num, den) = 1 and den > 0.

export interface Rational {
  readonly n: bigint;
  readonly d: bigint;
}

import { budget, BudgetError, MAX_BITS } from './budget';

// Big-number work is charged by operand size, in 64-bit limbs (docs/answers.md, "Work and size
// bounds"): a product or a division costs the product of its operands' limbs, each step of a gcd
// the limbs of the larger operand, LIMB_OPS_PER_UNIT limb operations a unit (rounded up: every
// operation costs at least 1). A limb operation is ~4× faster than a node evaluated, so a unit
// costs about the same time in both (BENCHMARKS.md, "Work budget of the answers").

const LIMB = 1n << 64n;

/** Limb operations charged as one unit of work. */
export const LIMB_OPS_PER_UNIT = 4;

/** Charges `ops` limb operations. */
export function chargeLimbs(ops: number): void {
  budget.charge(Math.ceil(ops / LIMB_OPS_PER_UNIT));
}

/** 64-bit limbs of |x| (at least 1). Linear in the size of x: cheaper than any operation charged by it. */
export function limbs(x: bigint): number {
  if (x < 0n) x = -x;
  if (x < LIMB) return 1;
  return Math.ceil(x.toString(16).length / 16);
}

/** Charges a product (or a division) of operands of `a` and `b` limbs. */
function chargeMul(a: number, b: number): void {
  chargeLimbs(a * b);
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  // Each step divides the larger remainder; the operands only shrink, so their size at the start bounds every step.
  const size = Math.max(limbs(a), limbs(b));
  while (b !== 0n) {
    chargeLimbs(size);
    [a, b] = [b, a % b];
  }
  return a;
}

const LIMIT = 1n << BigInt(MAX_BITS);

/** Operands above MAX_BITS are not reduced (the gcd would cost quadratic time): not decided. */
function capped(x: bigint): void {
  if (x >= LIMIT || -x >= LIMIT) throw new BudgetError(`an exact operand over ${MAX_BITS} bits`);
}

export function rat(n: bigint, d: bigint = 1n): Rational {
  if (d === 0n) throw new RangeError('zero denominator');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  capped(n);
  capped(d);
  const g = gcd(n, d);
  return g > 1n ? { n: n / g, d: d / g } : { n, d };
}

export const ZERO = rat(0n);
export const ONE = rat(1n);

/** Charges the cross products of a·d ± b·n (three products of limb counts). */
function chargeCross(a: Rational, b: Rational): void {
  const an = limbs(a.n);
  const ad = limbs(a.d);
  const bn = limbs(b.n);
  const bd = limbs(b.d);
  chargeMul(an, bd);
  chargeMul(bn, ad);
  chargeMul(ad, bd);
}

export const add = (a: Rational, b: Rational): Rational => {
  chargeCross(a, b);
  return rat(a.n * b.d + b.n * a.d, a.d * b.d);
};
export const sub = (a: Rational, b: Rational): Rational => {
  chargeCross(a, b);
  return rat(a.n * b.d - b.n * a.d, a.d * b.d);
};
export const mul = (a: Rational, b: Rational): Rational => {
  chargeCross(a, b);
  return rat(a.n * b.n, a.d * b.d);
};
export const neg = (a: Rational): Rational => ({ n: -a.n, d: a.d });
export function div(a: Rational, b: Rational): Rational | null {
  if (b.n === 0n) return null;
  chargeCross(a, b);
  return rat(a.n * b.d, a.d * b.n);
}
export const eq = (a: Rational, b: Rational): boolean => a.n === b.n && a.d === b.d;
export const cmp = (a: Rational, b: Rational): number => {
  chargeCross(a, b);
  const x = a.n * b.d - b.n * a.d;
  return x < 0n ? -1 : x > 0n ? 1 : 0;
};
export const isInteger = (a: Rational): boolean => a.d === 1n;

/** Integer power; `null` when the result would be huge (guards `10^{10^{10}}`) or 0^-k. */
export function powInt(a: Rational, k: bigint): Rational | null {
  if (k < 0n) {
    const inv = div(ONE, a);
    return inv === null ? null : powInt(inv, -k);
  }
  const bits = Math.max(bitLength(a.n), bitLength(a.d));
  if (k > BigInt(MAX_BITS) || bits * Number(k) > MAX_BITS) return null;
  // Repeated squaring: its last product, of two halves of the result, dominates.
  const out = Math.ceil((bits * Number(k)) / 64);
  chargeMul(out, out);
  return rat(a.n ** k, a.d ** k);
}

function bitLength(x: bigint): number {
  return (x < 0n ? -x : x).toString(2).length;
}

/** Exact integer k-th root of a non-negative integer, or null. */
export function intRoot(x: bigint, k: number): bigint | null {
  if (x < 0n) return null;
  if (x < 2n) return x;
  // Every power below is at most about as large as x: a product of x's limbs per power taken.
  const size = limbs(x);
  chargeLimbs(3 * size * size);
  let r = BigInt(Math.round(Math.pow(Number(x), 1 / k)));
  for (const c of [r - 1n, r, r + 1n]) if (c >= 0n && c ** BigInt(k) === x) return c;
  // Large values: Newton's method on BigInt.
  if (bitLength(x) < 1000) {
    r = x;
    const K = BigInt(k);
    for (let i = 0; i < 2000; i++) {
      chargeLimbs(2 * size * size);
      const next = ((K - 1n) * r + x / r ** (K - 1n)) / K;
      if (next >= r) break;
      r = next;
    }
    if (r ** BigInt(k) === x) return r;
  }
  return null;
}

/** Exact k-th root of a rational, or null when irrational. */
export function ratRoot(a: Rational, k: number): Rational | null {
  if (a.n < 0n) {
    if (k % 2 === 0) return null;
    const r = ratRoot(neg(a), k);
    return r && neg(r);
  }
  const n = intRoot(a.n, k);
  const d = intRoot(a.d, k);
  return n !== null && d !== null ? rat(n, d) : null;
}

/** Parses `123`, `-0.50`, `.5`, `1e-3` exactly. */
export function parseDecimal(s: string): Rational | null {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const frac = m[3] ?? '';
  let n = BigInt((m[2] || '0') + frac);
  let d = 10n ** BigInt(frac.length);
  const e = m[4] ? Number(m[4]) : 0;
  if (Math.abs(e) > 10_000) return null;
  // Reading the digits and scaling by 10^|e|: quadratic in the limbs of the result at most.
  const digits = Math.ceil(((m[2] ?? '').length + frac.length + Math.abs(e)) / 19) || 1;
  chargeMul(digits, digits);
  if (e > 0) n *= 10n ** BigInt(e);
  else if (e < 0) d *= 10n ** BigInt(-e);
  if (m[1] === '-') n = -n;
  return rat(n, d);
}

export function toNumber(a: Rational): number {
  chargeLimbs(limbs(a.n) + limbs(a.d));
  const n = Number(a.n);
  const d = Number(a.d);
  if (Number.isFinite(n) && Number.isFinite(d)) return n / d;
  // Scale down huge values before converting.
  const shift = BigInt(Math.max(bitLength(a.n), bitLength(a.d)) - 1000);
  return Number(a.n >> (shift > 0n ? shift : 0n)) / Number(a.d >> (shift > 0n ? shift : 0n));
}

/** Rounds to `dp` decimal places (half away from zero), as an integer count of 10^-dp units. */
export function roundUnits(a: Rational, dp: number): bigint {
  const scaleN = dp >= 0 ? 10n ** BigInt(dp) : 1n;
  const scaleD = dp >= 0 ? 1n : 10n ** BigInt(-dp);
  const scale = Math.ceil(Math.abs(dp) / 19) || 1;
  const size = Math.max(limbs(a.n), limbs(a.d)) + scale;
  chargeMul(size, size);
  const num = a.n * scaleN;
  const den = a.d * scaleD;
  const sign = num < 0n ? -1n : 1n;
  const abs = num < 0n ? -num : num;
  return sign * ((2n * abs + den) / (2n * den));
}

export function format(a: Rational): string {
  // Decimal conversion of a big integer is quadratic in its limbs.
  const size = limbs(a.n) + limbs(a.d);
  chargeMul(size, size);
  return a.d === 1n ? a.n.toString() : `${a.n}/${a.d}`;
}
