// The decision of docs/contract.md#answer-equivalence between two canonical answers (docs/answers.md "Decision rules").
// Long file: one job, the decision rules for every pair of answer types, in the order docs/answers.md lists them.
import { budget, BudgetError, ChargedMemo, limits, withBudget } from './budget';
import { ExpressionError, exactEval, numEval, parts, type Num } from './evaluate';
import { errorMessage } from '../../util/errors';
import type { Node } from './expression-tree';
import * as Q from './rational';
import { canonicalBounded, freeVars, hasDecimal, type Canonical, type Iv, type Reading, type Value } from './typed';

export interface SideInfo {
  normalised: string;
  type: string;
  rewrites: string[];
}

export interface Comparison {
  equal: boolean;
  reason: string;
  left: SideInfo;
  right: SideInfo;
  /** The work budget (or a size bound) ran out: not decided, treated as not equal. */
  undecided?: boolean;
  /** Units of work the comparison used (docs/answers.md, "Work and size bounds"). */
  units?: number;
}

/** The work budgets of a parse and of a comparison (budget.ts). */
export { limits };

interface Verdict {
  equal: boolean;
  reason: string;
}

const yes = (reason: string): Verdict => ({ equal: true, reason });
const no = (reason: string): Verdict => ({ equal: false, reason });

// ---------------------------------------------------------------- scalars

/** Decimal places for the decimal-literal rule: 6, more for a literal like 1.5\times10^{-7}. */
function decimalPlaces(x: Node, y: Node): number {
  return Math.max(6, 6 - sciExponent(x), 6 - sciExponent(y));
}

/** k for a literal written m \times 10^{k} (or m e k); 0 otherwise. */
function sciExponent(n: Node): number {
  if (n.k === 'neg') return sciExponent(n.x);
  if (n.k === 'num') {
    const m = /[eE]([-+]?\d+)$/.exec(n.src);
    return m ? Number(m[1]) : 0;
  }
  if (n.k === 'mul' && n.a.k === 'num' && n.b.k === 'pow' && n.b.a.k === 'num' && n.b.a.src === '10') {
    const e = exactEval(n.b.b);
    return e && Q.isInteger(e) && e.n > -300n && e.n < 300n ? Number(e.n) : 0;
  }
  return 0;
}

function roundedEqual(a: number, b: number, dp: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  const s = 10 ** dp;
  return Math.round(a * s) === Math.round(b * s);
}

function close(a: number, b: number, rel: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b)) + 1e-12;
}

function numClose(x: Num, y: Num, decimal: boolean, dp: number, rel: number): boolean {
  const [xr, xi] = parts(x);
  const [yr, yi] = parts(y);
  if (decimal) return roundedEqual(xr, yr, dp) && roundedEqual(xi, yi, dp);
  const scale = Math.max(Math.hypot(xr, xi), Math.hypot(yr, yi));
  if (!Number.isFinite(scale)) return xr === yr && xi === yi;
  return Math.hypot(xr - yr, xi - yi) <= rel * scale + 1e-12;
}

const absQ = (q: Q.Rational): Q.Rational => (q.n < 0n ? Q.neg(q) : q);

/** |x - y| <= 10^-dp in both parts. */
function withinUnits(x: Num, y: Num, dp: number): boolean {
  const [xr, xi] = parts(x);
  const [yr, yi] = parts(y);
  const unit = 10 ** -dp * (1 + 1e-9);
  return Math.abs(xr - yr) <= unit && Math.abs(xi - yi) <= unit;
}

function tryNum(n: Node, env?: ReadonlyMap<string, number>): Num | null {
  try {
    const v = numEval(n, env);
    const [re, im] = parts(v);
    return Number.isNaN(re) || Number.isNaN(im) ? null : v;
  } catch (e) {
    if (e instanceof ExpressionError) return null;
    throw e;
  }
}

function isFiniteNum(v: Num): boolean {
  const [re, im] = parts(v);
  return Number.isFinite(re) && Number.isFinite(im);
}

function hasInf(n: Node): boolean {
  budget.check();
  if (n.k === 'const') return n.c === 'inf';
  if (n.k === 'neg') return hasInf(n.x);
  if (n.k === 'group') return n.items.some(hasInf);
  return false;
}

function sameVars(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Numbers and expressions (docs/contract.md#answer-equivalence first three rules). */
export function compareScalars(x: Node, y: Node, xv: string[], yv: string[]): Verdict {
  if (!sameVars(xv, yv)) return no(`different free variables {${xv.join(',')}} vs {${yv.join(',')}}`);
  if (clearlyDifferent(fingerprint(x, xv), fingerprint(y, yv))) return no('numerically different');
  const decimal = hasDecimal(x) || hasDecimal(y);
  const dp = decimalPlaces(x, y);
  if (xv.length === 0) return compareConstants(x, y, decimal, dp);
  return compareFunctions(x, y, xv, decimal, dp);
}

// ---------------------------------------------------------------- per-answer caches

// Values cached per answer node are charged again on every read (ChargedMemo): a comparison's
// units do not depend on which comparisons ran before it.
const exactMemo = new ChargedMemo<Node, Q.Rational | null>();

/** exactEval of a constant node, once per node (a node belongs to one cached answer). */
function exactConst(n: Node): Q.Rational | null {
  return exactMemo.get(n, () => exactEval(n));
}

const fingerprints = new ChargedMemo<Node, Float64Array>();

/**
 * The node's numeric values at the sample points (one point for a constant), re and im
 * interleaved, NaN where undefined: computed once per answer, so most unequal pairs are told
 * apart without evaluating anything.
 */
function fingerprint(n: Node, vars: string[]): Float64Array {
  return fingerprints.get(n, () => {
    const count = vars.length === 0 ? 1 : POINTS.length;
    const f = new Float64Array(2 * count);
    for (let k = 0; k < count; k++) {
      const v = tryNum(n, vars.length === 0 ? undefined : envs(vars, k).num);
      const [re, im] = v === null ? [NaN, NaN] : parts(v);
      f[2 * k] = re;
      f[2 * k + 1] = im;
    }
    return f;
  });
}

/**
 * A difference far beyond every tolerance of the rules (1e-4 relative at some point where both
 * sides are finite) proves "not equal"; anything closer goes to the full rules.
 */
function clearlyDifferent(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k += 2) {
    const ar = a[k]!;
    const ai = a[k + 1]!;
    const br = b[k]!;
    const bi = b[k + 1]!;
    // NaN or ±Infinity anywhere: this point proves nothing (ar - ar is NaN then).
    if (!Number.isFinite(ar - ar + ai - ai + br - br + bi - bi)) continue;
    const scale = Math.max(1, Math.abs(ar) + Math.abs(ai), Math.abs(br) + Math.abs(bi));
    if (Math.abs(ar - br) + Math.abs(ai - bi) > 1e-4 * scale) return true;
  }
  return false;
}

function compareConstants(x: Node, y: Node, decimal: boolean, dp: number): Verdict {
  const ex = exactConst(x);
  const ey = ex && exactConst(y);
  if (ex && ey) {
    if (decimal) {
      const eq = Q.roundUnits(ex, dp) === Q.roundUnits(ey, dp);
      return eq ? yes(`equal after rounding to ${dp} decimal places`) : no(`differ at ${dp} decimal places`);
    }
    return Q.eq(ex, ey) ? yes('equal exact rationals') : no('different exact rationals');
  }
  const nx = tryNum(x);
  const ny = tryNum(y);
  if (nx === null || ny === null) return no('not a number');
  // An overflow (2^{65536}) is not the constant \infty: such values cannot be told apart.
  if ((!isFiniteNum(nx) && !hasInf(x)) || (!isFiniteNum(ny) && !hasInf(y))) return no('too large to compare');
  if (decimal) {
    return numClose(nx, ny, true, dp, 0)
      ? yes(`equal after rounding to ${dp} decimal places`)
      : no(`differ at ${dp} decimal places`);
  }
  return numClose(nx, ny, false, dp, 1e-9) ? yes('numerically equal (relative 1e-9)') : no('numerically different');
}

// Deterministic points (docs/contract.md#answer-equivalence "seeded random points"): the same for every comparison.
const POINTS = seededPoints(8, 16, 0x5eed);

function seededPoints(n: number, width: number, seed: number): Q.Rational[][] {
  let s = seed >>> 0;
  const rnd = () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // Rationals in (0.3, 2.3), distinct denominators so no accidental coincidences.
  return Array.from({ length: n }, () =>
    Array.from({ length: width }, () => Q.rat(BigInt(Math.floor(300 + rnd() * 2000)), 1000n + BigInt(Math.floor(rnd() * 97)))),
  );
}

function envs(vars: string[], k: number): { exact: Map<string, Q.Rational>; num: Map<string, number> } {
  const exact = new Map<string, Q.Rational>();
  const num = new Map<string, number>();
  vars.forEach((v, i) => {
    const r = POINTS[k]![i % 16]!;
    // More than 16 variables reuse values shifted by i so they stay distinct.
    const val = i < 16 ? r : Q.add(r, Q.rat(BigInt(i)));
    exact.set(v, val);
    num.set(v, Q.toNumber(val));
  });
  return { exact, num };
}

function compareFunctions(x: Node, y: Node, vars: string[], decimal: boolean, dp: number): Verdict {
  let valid = 0;
  for (let k = 0; k < POINTS.length; k++) {
    budget.check();
    const { exact, num } = envs(vars, k);
    const ex = exactEval(x, exact);
    const ey = ex && exactEval(y, exact);
    if (ex && ey) {
      // At a sample point, "agree to dp places" is |a - b| <= 10^-dp: rounding each value could
      // split two values that straddle a rounding boundary.
      const eq = decimal ? Q.cmp(absQ(Q.sub(ex, ey)), Q.rat(1n, 10n ** BigInt(dp))) <= 0 : Q.eq(ex, ey);
      if (!eq) return no('differ at a sample point');
      valid++;
      continue;
    }
    const nx = tryNum(x, num);
    const ny = tryNum(y, num);
    // Undefined or overflowing on both sides: this point says nothing.
    const okX = nx !== null && isFiniteNum(nx);
    const okY = ny !== null && isFiniteNum(ny);
    if (!okX && !okY) continue;
    if (!okX || !okY) return no('defined at a sample point on one side only');
    // Decimal literals: agreement to dp places, as for constants (\pi x ≠ 3.14159 x).
    const ok = decimal ? withinUnits(nx, ny, dp) : numClose(nx, ny, false, dp, 1e-8);
    if (!ok) return no('differ at a sample point');
    valid++;
  }
  return valid >= 3 ? yes(`equal at ${valid} seeded sample points`) : no('could not evaluate at sample points');
}

// ---------------------------------------------------------------- relations

/** f1 = r·f2 at every sample point for one r ≠ 0 (r > 0 when `positive`). */
function proportional(f1: Node, f2: Node, vars: string[], positive: boolean): Verdict {
  return exactProportional(f1, f2, vars, positive) ?? numericProportional(f1, f2, vars, positive);
}

/** The exact version on rational points; null when some point is not exactly evaluable. */
function exactProportional(f1: Node, f2: Node, vars: string[], positive: boolean): Verdict | null {
  let ratio: Q.Rational | null = null;
  for (let k = 0; k < POINTS.length; k++) {
    budget.check();
    const { exact } = envs(vars, k);
    const a = exactEval(f1, exact);
    const b = a && exactEval(f2, exact);
    if (!a || !b) return null;
    if (b.n === 0n) {
      if (a.n !== 0n) return no('not proportional');
      continue;
    }
    const r = Q.div(a, b)!;
    if (ratio === null) {
      if (r.n === 0n) return no('not proportional (zero factor)');
      if (positive && r.n < 0n) return no('factor of the wrong sign');
      ratio = r;
    } else if (!Q.eq(r, ratio)) return no('not proportional');
  }
  return ratio === null ? yes('both identically zero') : yes(`proportional with factor ${Q.format(ratio)}`);
}

function numericProportional(f1: Node, f2: Node, vars: string[], positive: boolean): Verdict {
  let ratio: number | null = null;
  let valid = 0;
  for (let k = 0; k < POINTS.length; k++) {
    budget.check();
    const { num } = envs(vars, k);
    const a = tryNum(f1, num);
    const b = tryNum(f2, num);
    if (a === null || b === null || !isFiniteNum(a) || !isFiniteNum(b)) continue;
    const [ar, ai] = parts(a);
    const [br, bi] = parts(b);
    if (Math.abs(ai) > 1e-9 || Math.abs(bi) > 1e-9) continue;
    valid++;
    const tiny = 1e-12;
    if (Math.abs(br) < tiny) {
      if (Math.abs(ar) >= tiny) return no('not proportional');
      continue;
    }
    const r = ar / br;
    if (ratio === null) {
      if (Math.abs(r) < 1e-12) return no('not proportional (zero factor)');
      if (positive && r < 0) return no('factor of the wrong sign');
      ratio = r;
    } else if (!close(r, ratio, 1e-10)) return no('not proportional');
  }
  if (valid < 3) return no('could not evaluate at sample points');
  return ratio === null ? yes('both identically zero') : yes(`proportional with factor ${fmt(ratio)}`);
}

function fmt(x: number): string {
  return Number(x.toPrecision(6)).toString();
}

function compareEq(a: Value & { t: 'eq' }, b: Value & { t: 'eq' }): Verdict {
  // Two definitions "f(x) = ..." / "P(x) = ...": the names are labels, the right sides decide.
  if (a.lhsIsName && b.lhsIsName) {
    const v = compareScalars(a.rhs, b.rhs, [...freeVars(a.rhs)].sort(), [...freeVars(b.rhs)].sort());
    if (v.equal) return yes(`same right-hand side (${v.reason})`);
  }
  if (!sameVars(a.vars, b.vars)) return no('equations in different variables');
  const f1: Node = { k: 'sub', a: a.lhs, b: a.rhs };
  const f2: Node = { k: 'sub', a: b.lhs, b: b.rhs };
  if (a.vars.length === 0) return compareScalars(f1, f2, [], []);
  const v = proportional(f1, f2, a.vars, false);
  return v.equal ? yes(`equations equal up to a non-zero factor (${v.reason})`) : v;
}

function compareIneq(a: Value & { t: 'ineq' }, b: Value & { t: 'ineq' }): Verdict {
  if (!sameVars(a.vars, b.vars)) return no('inequalities in different variables');
  if (a.strict === b.strict) {
    const v = proportional(a.f, b.f, a.vars, true);
    if (v.equal) return yes(`inequalities equal up to a positive factor (${v.reason})`);
  }
  return a.vars.length === 1 ? sameSolutionSet(a, b) : no('different inequalities');
}

// ---------------------------------------------------------------- one-variable solution sets

type OneVarSet = Value & ({ t: 'ineq' } | { t: 'ineqs' } | { t: 'interval' });

/** Membership test of a solution set, plus the points where its boundary is known. */
function membership(v: OneVarSet): { name: string | null; has: (x: number) => boolean; ends: number[] } | null {
  if (v.t === 'ineqs') {
    if (v.vars.length !== 1) return null;
    const ms = v.items.map(membership);
    if (ms.some((m) => m === null)) return null;
    return { name: v.vars[0]!, has: (x) => ms.every((m) => m!.has(x)), ends: [] };
  }
  if (v.t === 'ineq') {
    if (v.vars.length !== 1) return null;
    const name = v.vars[0]!;
    const env = new Map([[name, 0]]); // one map for every test point: this runs ~1000 times
    const has = (x: number): boolean => {
      env.set(name, x);
      const r = tryNum(v.f, env);
      if (r === null) return false;
      const [re, im] = parts(r);
      if (Math.abs(im) > 1e-12 || !Number.isFinite(re)) return false;
      return v.strict ? re < -1e-12 : re <= 1e-12;
    };
    return { name, has, ends: [] };
  }
  const ps: { lo: number; hi: number; loClosed: boolean; hiClosed: boolean }[] = [];
  for (const p of v.parts) {
    const lo = realValue(p.lo);
    const hi = realValue(p.hi);
    if (lo === null || hi === null) return null;
    ps.push({ lo, hi, loClosed: p.loClosed, hiClosed: p.hiClosed });
  }
  const has = (x: number): boolean =>
    ps.some((p) => (p.loClosed ? x >= p.lo : x > p.lo) && (p.hiClosed ? x <= p.hi : x < p.hi));
  return { name: v.v, has, ends: ps.flatMap((p) => [p.lo, p.hi]).filter(Number.isFinite) };
}

/** Deterministic test points: a 1/8 grid on [-64, 64] and each known boundary point ± 1e-7. */
const GRID = Array.from({ length: 1025 }, (_, i) => -64 + i / 8);

/**
 * `x^2 < 4` vs `(-2,2)`, `|x| \le 1` vs `-1 \le x \le 1`: the same solution set, judged by
 * membership at the test points (a non-linear one-variable inequality has no closed form here).
 */
function sameSolutionSet(a: OneVarSet, b: OneVarSet): Verdict {
  const ma = membership(a);
  const mb = membership(b);
  if (!ma || !mb) return no('not comparable solution sets');
  if (ma.name !== null && mb.name !== null && ma.name !== mb.name) return no('different variables');
  const ends = [...ma.ends, ...mb.ends].flatMap((e) => [e, e - 1e-7, e + 1e-7]);
  for (const x of [...GRID, ...ends]) {
    budget.check();
    if (ma.has(x) !== mb.has(x)) return no(`solution sets differ at x = ${fmt(x)}`);
  }
  return yes('same solution set at every test point');
}

// ---------------------------------------------------------------- intervals

function realValue(n: Node): number | null {
  const f = fingerprint(n, []); // cached per node
  return Number.isNaN(f[0]!) || f[1] !== 0 ? null : f[0]!;
}

/** Sorted by lower end, touching or overlapping parts merged ([0,1]∪[1,2] = [0,2]). */
function canonicalIntervals(ps: Iv[]): Iv[] | null {
  const withVals = ps.map((p) => ({ p, lo: realValue(p.lo), hi: realValue(p.hi) }));
  if (withVals.some((w) => w.lo === null || w.hi === null)) return ps; // symbolic ends: keep order
  withVals.sort((a, b) => a.lo! - b.lo! || Number(b.p.loClosed) - Number(a.p.loClosed));
  const out: { p: Iv; lo: number; hi: number }[] = [];
  for (const w of withVals) {
    const last = out[out.length - 1];
    if (last && (w.lo! < last.hi || (w.lo === last.hi && (w.p.loClosed || last.p.hiClosed)))) {
      if (w.hi! > last.hi || (w.hi === last.hi && w.p.hiClosed)) {
        last.p = { ...last.p, hi: w.p.hi, hiClosed: w.p.hiClosed };
        last.hi = w.hi!;
      }
    } else out.push({ p: { ...w.p }, lo: w.lo!, hi: w.hi! });
  }
  return out.map((o) => o.p);
}

const intervalMemo = new ChargedMemo<Value, Iv[] | null>();

function canonicalIntervalsOf(v: Value & { t: 'interval' }): Iv[] | null {
  return intervalMemo.get(v, () => canonicalIntervals(v.parts));
}

function endEqual(x: Node, y: Node): boolean {
  return compareScalars(x, y, [], []).equal;
}

function compareIntervals(a: Value & { t: 'interval' }, b: Value & { t: 'interval' }): Verdict {
  if (a.v !== null && b.v !== null && a.v !== b.v) return no('intervals of different variables');
  const pa = canonicalIntervalsOf(a);
  const pb = canonicalIntervalsOf(b);
  if (!pa || !pb || pa.length !== pb.length) return no('different number of intervals');
  for (let i = 0; i < pa.length; i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x.loClosed !== y.loClosed || x.hiClosed !== y.hiClosed) return no('different openness of an end point');
    if (!endEqual(x.lo, y.lo) || !endEqual(x.hi, y.hi)) return no('different end points');
  }
  return yes('same intervals (end points and openness)');
}

// ---------------------------------------------------------------- values

function compareLists(xs: Value[], ys: Value[]): boolean {
  return xs.length === ys.length && xs.every((x, i) => valueEqual(x, ys[i]!).equal);
}

/** The exact value of a constant, decimal-free scalar as a key ("3/4"), else null. */
function exactKey(v: Value): string | null {
  if (v.t !== 'scalar' || v.vars.length > 0 || hasDecimal(v.node)) return null;
  const e = exactEval(v.node);
  return e ? Q.format(e) : null;
}

/** Sets of exact rationals compare by keys in linear time; null when some item has no key. */
function exactSetEqual(xs: Value[], ys: Value[]): boolean | null {
  const kx = new Set<string>();
  const ky = new Set<string>();
  for (const x of xs) {
    const k = exactKey(x);
    if (k === null) return null;
    kx.add(k);
  }
  for (const y of ys) {
    const k = exactKey(y);
    if (k === null) return null;
    ky.add(k);
  }
  return kx.size === ky.size && [...kx].every((k) => ky.has(k));
}

function compareTuples(a: Value & { t: 'tuple' }, b: Value & { t: 'tuple' }): Verdict {
  if (a.names && b.names) {
    // Two lists of assignments: match by name, in any order.
    if (a.names.length !== b.names.length) return no('different named values');
    const ok = a.names.every((n, i) => {
      const j = b.names!.indexOf(n);
      return j >= 0 && valueEqual(a.items[i]!, b.items[j]!).equal;
    });
    return ok ? yes('named values equal') : no('named values differ');
  }
  if (!a.ratio !== !b.ratio) return no('a ratio is not a tuple');
  return compareLists(a.items, b.items) ? yes('tuples equal element-wise') : no('tuples differ');
}

function contains(xs: Value[], ys: Value[]): boolean {
  return ys.every((y) => xs.some((x) => valueEqual(x, y).equal));
}

function digitsOf(v: Value): string | null {
  if (v.t === 'base') return v.digits.replace(/^0+(?=.)/, '');
  if (v.t === 'scalar' && v.node.k === 'num' && !v.node.dec && /^\d+$/.test(v.node.src)) return v.node.src.replace(/^0+(?=.)/, '');
  return null;
}

/** docs/contract.md#answer-equivalence rules by type; callers guarantee symmetry by a canonical argument order. */
export function valueEqual(a: Value, b: Value): Verdict {
  if (a.t === 'base' || b.t === 'base') {
    const da = digitsOf(a);
    const db = digitsOf(b);
    if (da === null || db === null) return no('base numeral vs non-numeral');
    if (a.t === 'base' && b.t === 'base' && a.base !== b.base) return no('different bases');
    return da === db ? yes('same digits') : no('different digits');
  }
  if (a.t === 'eq' && b.t === 'scalar' && a.lhsIsName) {
    const v = compareScalars(a.rhs, b.node, [...freeVars(a.rhs)].sort(), b.vars);
    return v.equal ? yes(`assignment: right-hand side ${v.reason}`) : v;
  }
  if (b.t === 'eq' && a.t === 'scalar') return valueEqual(b, a);
  const oneVarSet = (v: Value): v is OneVarSet => v.t === 'ineq' || v.t === 'ineqs' || v.t === 'interval';
  if (oneVarSet(a) && oneVarSet(b) && a.t !== b.t && (a.t === 'interval' || b.t === 'interval')) return sameSolutionSet(a, b);
  if (a.t !== b.t) return no(`different types (${a.t} vs ${b.t})`);
  switch (a.t) {
    case 'empty':
      return yes('both empty');
    case 'text':
      return a.s === (b as typeof a).s ? yes('same text (case-insensitive)') : no('different text');
    case 'choice':
      return a.letter === (b as typeof a).letter ? yes('same choice letter') : no('different choice letters');
    case 'scalar':
      return compareScalars(a.node, (b as typeof a).node, a.vars, (b as typeof a).vars);
    case 'tuple':
      return compareTuples(a, b as typeof a);
    case 'set': {
      const bs = (b as typeof a).items;
      const fast = exactSetEqual(a.items, bs);
      if (fast !== null) return fast ? yes('sets equal (unordered, exact)') : no('sets differ');
      return contains(a.items, bs) && contains(bs, a.items) ? yes('sets equal (unordered)') : no('sets differ');
    }
    case 'interval':
      return compareIntervals(a, b as typeof a);
    case 'eq':
      return compareEq(a, b as typeof a);
    case 'ineq':
      return compareIneq(a, b as typeof a);
    case 'matrix': {
      const rb = (b as typeof a).rows;
      const ok = a.rows.length === rb.length && a.rows.every((r, i) => compareLists(r, rb[i]!));
      return ok ? yes('matrices equal element-wise') : no('matrices differ');
    }
    case 'ineqs': {
      const bs = (b as typeof a).items;
      if (!sameVars(a.vars, (b as typeof a).vars)) return no('inequalities in different variables');
      // The same inequalities, in either order (`1\le|z|\le2` is `2\ge|z|\ge1`).
      if (a.items.length === bs.length && contains(a.items, bs) && contains(bs, a.items)) return yes('the same inequalities');
      return a.vars.length === 1 ? sameSolutionSet(a, b as typeof a) : no('different inequalities');
    }
    case 'time': {
      const t = b as typeof a;
      return sameTime(a, t) ? yes('the same time of day') : no('different times of day');
    }
  }
}

/**
 * Two times of day: equal on the 24-hour clock when both say which half of the day they are in;
 * a time written without a.m./p.m. (`4:30`) equals either reading of the other (`4:30 p.m.`).
 */
function sameTime(a: Value & { t: 'time' }, b: Value & { t: 'time' }): boolean {
  if (a.m !== b.m) return false;
  const h24 = (v: Value & { t: 'time' }): number => (v.half === null ? v.h : (v.h % 12) + (v.half === 'pm' ? 12 : 0));
  if (a.half !== null && b.half !== null) return h24(a) === h24(b);
  const [bare, other] = a.half === null ? [a, b] : [b, a];
  return bare.h === other.h || bare.h === h24(other);
}

/** Reading pairs that may be compared: two percents compare as written (50% vs 5%). */
function compatible(x: Reading, y: Reading, cx: Canonical, cy: Canonical): boolean {
  // A row and a column both read as tuples; that reading is for comparing with a written tuple.
  if (x.tag === 'vector' && y.tag === 'vector') return false;
  if (cx.percent && cy.percent) return x.tag !== 'percent-scaled' && y.tag !== 'percent-scaled';
  return true;
}

function side(c: Canonical): SideInfo {
  return { normalised: c.normalised, type: c.type, rewrites: c.rewrites };
}

function describe(x: Reading, y: Reading): string {
  const tags = [x.tag, y.tag].filter((t) => t !== 'plain');
  return tags.length ? ` [reading: ${[...new Set(tags)].join(', ')}]` : '';
}

/** Compares two canonical answers (the pair order is fixed by the caller). */
export function compareCanonical(cx: Canonical, cy: Canonical): Comparison {
  const left = side(cx);
  const right = side(cy);
  if (cx.normalised === cy.normalised) return { equal: true, reason: 'identical after normalisation', left, right };
  // A work budget, not a clock: the same pair uses the same units, so it is decided (or not) the
  // same way everywhere, and a retry could not change anything.
  const r = withBudget(limits.compareUnits, () => decideReadings(cx, cy));
  if (r.error === undefined) return { equal: r.value!.equal, reason: r.value!.reason, left, right, units: r.units };
  if (r.error instanceof BudgetError) {
    return { equal: false, reason: `not decided (${r.error.message}): treated as not equal`, left, right, undecided: true, units: r.units };
  }
  // An unexpected error (a bug, or memory exhausted by an adversarial answer): "not equal", never
  // a crash of the scoring loop (the reason carries the message).
  return { equal: false, reason: `could not compare: ${errorMessage(r.error)}`, left, right, units: r.units };
}

/** Equal when some compatible pair of readings is equal (docs/answers.md, readings). */
function decideReadings(cx: Canonical, cy: Canonical): Verdict {
  let firstNo: Verdict | null = null;
  for (const x of cx.readings) {
    for (const y of cy.readings) {
      if (!compatible(x, y, cx, cy)) continue;
      const v = valueEqual(x.value, y.value);
      if (v.equal) return yes(v.reason + describe(x, y));
      firstNo ??= v;
    }
  }
  return no(firstNo?.reason ?? 'no comparable readings');
}

export function compareAnswers(a: string, b: string): Comparison {
  return compareCanonical(canonicalBounded(a), canonicalBounded(b));
}
