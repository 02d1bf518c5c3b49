// Typed parse of a normalised answer (docs/contract.md#answer-equivalence): number/expression, set, tuple, interval
// (and unions), relation, matrix, text, multiple-choice letter, base-subscripted numeral.
// An answer can have several READINGS when its notation is ambiguous ("(1,2)" is a tuple or an
// open interval, "1,22" a decimal comma or a list, "28\%" is 28 or 0.28); two answers are equal
// when some pair of readings is (docs/answers.md).
// Long file: one job, reading every answer type the benchmarks use; each type's parse sits beside
// the others because readings of one answer are tried together (a split would scatter that order).
import { budget, BudgetError, limits, treeSize, withBudget } from './budget';
import { errorMessage } from '../../util/errors';
import { exactEval, numEval, parts, ExpressionError } from './evaluate';
import { parseLatex, ParseError, nodeKey, numNode, type Node, type RelOp } from './latex';
import { hasWord, normalise } from './normalise';
import * as Q from './rational';

export interface Iv {
  lo: Node;
  hi: Node;
  loClosed: boolean;
  hiClosed: boolean;
}

export type Value =
  | { t: 'empty' }
  | { t: 'text'; s: string }
  | { t: 'choice'; letter: string }
  | { t: 'base'; digits: string; base: string | null }
  | { t: 'scalar'; node: Node; vars: string[] }
  /**
   * `names`: from "a=2, b=3"; two named tuples compare by name, otherwise by position. `ratio`:
   * written `a:b` (a ratio is not a pair). `vector`: a one-row or one-column matrix read as a tuple.
   */
  | { t: 'tuple'; items: Value[]; names?: string[]; ratio?: boolean; vector?: boolean }
  | { t: 'set'; items: Value[] }
  | { t: 'interval'; parts: Iv[]; v: string | null }
  | { t: 'eq'; lhs: Node; rhs: Node; vars: string[]; lhsIsName: boolean }
  /** f < 0 (strict) or f <= 0. */
  | { t: 'ineq'; f: Node; strict: boolean; vars: string[] }
  /** A chain of inequalities that is not an interval (`1\le|z|\le\frac32`): all of them hold. */
  | { t: 'ineqs'; items: (Value & { t: 'ineq' })[]; vars: string[] }
  /** A time of day `h:mm`, with its half of the day when written (`4:30 p.m.`). */
  | { t: 'time'; h: number; m: number; half: 'am' | 'pm' | null }
  | { t: 'matrix'; rows: Value[][] };

export type ReadingTag = 'plain' | 'percent-raw' | 'percent-scaled' | 'decimal-comma' | 'list-as-tuple' | 'vector';

export interface Reading {
  value: Value;
  tag: ReadingTag;
}

export interface Canonical {
  raw: string;
  normalised: string;
  rewrites: string[];
  type: string;
  readings: Reading[];
  percent: boolean;
  /**
   * For an answer whose only reading is an exact rational without decimal literals ("42",
   * "\frac{6}{8}", "2^3"): that rational as text. Two such answers are equal exactly when their
   * keys are (the full rules reduce to exact equality for them), so classes skip the comparison.
   */
  exactKey?: string;
  /** Units of work the parse used (set by canonicalOf; docs/answers.md, "Work and size bounds"). */
  units?: number;
}

const INF: Node = { k: 'const', c: 'inf' };
const NEG_INF: Node = { k: 'neg', x: INF };

// ---------------------------------------------------------------- helpers on nodes

export function freeVars(n: Node, out = new Set<string>()): Set<string> {
  budget.check();
  switch (n.k) {
    case 'var':
      out.add(n.name);
      break;
    case 'neg':
      freeVars(n.x, out);
      break;
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'pow':
      freeVars(n.a, out);
      freeVars(n.b, out);
      break;
    case 'pm':
      if (n.a) freeVars(n.a, out);
      freeVars(n.b, out);
      break;
    case 'fn':
      n.args.forEach((a) => freeVars(a, out));
      break;
    case 'group':
    case 'set':
    case 'union':
    case 'list':
    case 'ratio':
      n.items.forEach((a) => freeVars(a, out));
      break;
    case 'rel':
      n.parts.forEach((a) => freeVars(a, out));
      break;
    case 'matrix':
      n.rows.forEach((r) => r.forEach((a) => freeVars(a, out)));
      break;
    default:
      break;
  }
  return out;
}

export function hasDecimal(n: Node): boolean {
  budget.check();
  switch (n.k) {
    case 'num':
      return n.dec;
    case 'neg':
      return hasDecimal(n.x);
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'pow':
      return hasDecimal(n.a) || hasDecimal(n.b);
    case 'pm':
      return (n.a !== null && hasDecimal(n.a)) || hasDecimal(n.b);
    case 'fn':
      return n.args.some(hasDecimal);
    case 'group':
      return n.items.some(hasDecimal);
    default:
      return false;
  }
}

/** Is a scalar node one without any ± (those expand to sets)? */
function hasPm(n: Node): boolean {
  budget.check();
  switch (n.k) {
    case 'pm':
      return true;
    case 'neg':
      return hasPm(n.x);
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'pow':
      return hasPm(n.a) || hasPm(n.b);
    case 'fn':
      return n.args.some(hasPm);
    case 'group':
      return n.items.some(hasPm);
    default:
      return false;
  }
}

/** Expands every ± into its two signs (at most 8 expansions): `3\pm 2` -> [3+2, 3-2]. */
function expandPm(n: Node, limit = 8): Node[] {
  switch (n.k) {
    case 'pm': {
      const bs = expandPm(n.b, limit);
      const as = n.a ? expandPm(n.a, limit) : [null];
      const out: Node[] = [];
      for (const a of as)
        for (const b of bs) {
          const plus: Node = a ? { k: 'add', a, b } : b;
          const minus: Node = a ? { k: 'sub', a, b } : { k: 'neg', x: b };
          out.push(...(n.sign === 1 ? [plus, minus] : [minus, plus]));
        }
      if (out.length > limit) throw new ParseError('too many ±');
      return out;
    }
    case 'neg':
      return expandPm(n.x, limit).map((x) => ({ k: 'neg', x }));
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'pow': {
      const out: Node[] = [];
      for (const a of expandPm(n.a, limit)) for (const b of expandPm(n.b, limit)) out.push({ ...n, a, b } as Node);
      if (out.length > limit) throw new ParseError('too many ±');
      return out;
    }
    default:
      return [n];
  }
}

/**
 * A name on the left of an assignment: `x`, `x_1`, `f(x)`, `P(x,y)`, `(p,q)`; and a label made of
 * names: a segment or point name of 2–3 capital letters (`AB`, `ABC`), its length `|AB|`, a ratio
 * of such names (`\frac{NO}{BO}`, `V_1:V_2`).
 */
function isName(n: Node): boolean {
  if (n.k === 'var') return true;
  if (n.k === 'mul' && n.implicit && n.a.k === 'var' && n.b.k === 'group' && n.b.open === '(') {
    return n.b.items.every((x) => x.k === 'var');
  }
  if (n.k === 'group' && n.open === '(' && n.items.length >= 2) return n.items.every((x) => x.k === 'var');
  return isLabel(n);
}

/** Capital single letters multiplied implicitly (a segment `AB`, a triangle `ABC`). */
function capitals(n: Node, count = 0): number {
  if (n.k === 'var') return /^[A-Z]$/.test(n.name) ? count + 1 : -1;
  if (n.k === 'mul' && n.implicit) {
    const a = capitals(n.a, count);
    return a < 0 ? -1 : capitals(n.b, a);
  }
  return -1;
}

function isLabel(n: Node): boolean {
  const c = capitals(n);
  if (c >= 2 && c <= 3) return true;
  if (n.k === 'fn' && n.f === 'abs') return isName(n.args[0]!);
  if (n.k === 'div') return isName(n.a) && isName(n.b);
  if (n.k === 'ratio') return n.items.every(isName);
  return false;
}

/** The key a name is matched by in a named tuple (`a`, `AB`, `|AB|`). */
function nameKey(n: Node): string {
  return n.k === 'var' ? n.name : nodeKey(n);
}

function nameVar(n: Node): string | null {
  return n.k === 'var' ? n.name : null;
}

function isConstant(n: Node): boolean {
  return freeVars(n).size === 0;
}

// ---------------------------------------------------------------- node -> values

export class TypeFail extends Error {}

/** The values of a node: the first is the primary reading, ambiguous notations add more. */
function valuesOf(n: Node, rewrites: string[]): Value[] {
  switch (n.k) {
    case 'list':
      return listValues(n.items, rewrites);
    case 'group':
      return groupValues(n, rewrites);
    case 'set':
      return [{ t: 'set', items: n.items.flatMap((x) => itemValues(x, rewrites)) }];
    case 'union':
      return [unionValue(n.items, rewrites)];
    case 'rel':
      return relValues(n, rewrites);
    case 'matrix': {
      const rows = n.rows.map((r) => r.map((x) => scalarOnly(x)));
      const out: Value[] = [{ t: 'matrix', rows }];
      // A single row or column is also a vector: \begin{pmatrix}1\\2\end{pmatrix} = (1,2). The
      // vector reading never meets another one (compare.ts), so a row is not equal to a column.
      if (rows.length === 1 && rows[0]!.length > 1) out.push({ t: 'tuple', items: rows[0]!, vector: true });
      else if (rows.length > 1 && rows.every((r) => r.length === 1)) out.push({ t: 'tuple', items: rows.map((r) => r[0]!), vector: true });
      return out;
    }
    case 'ratio':
      return [{ t: 'tuple', items: n.items.map(scalarOnly), ratio: true }];
    case 'base':
      return [{ t: 'base', digits: n.digits, base: n.base }];
    default:
      if (n.k !== 'num' && n.k !== 'var' && hasMatrix(n)) {
        // Sums, products and multiples of literal matrices are evaluated to one matrix.
        rewrites.push('matrix arithmetic evaluated');
        return valuesOf({ k: 'matrix', rows: matrixOf(n) }, rewrites);
      }
      if (hasPm(n)) {
        rewrites.push('\\pm expanded to a set');
        return [{ t: 'set', items: expandPm(n).map(scalarOnly) }];
      }
      return [scalarOnly(n)];
  }
}

function scalarOnly(n: Node): Value {
  if (n.k === 'group' && n.items.length === 1) return scalarOnly(n.items[0]!);
  if (['list', 'group', 'set', 'union', 'rel', 'matrix', 'base', 'pm', 'ratio'].includes(n.k)) {
    if (n.k === 'group') return { t: 'tuple', items: n.items.map(scalarOnly) };
    if (n.k === 'set') return { t: 'set', items: n.items.map(scalarOnly) };
    throw new TypeFail(`nested ${n.k}`);
  }
  return { t: 'scalar', node: n, vars: [...freeVars(n)].sort() };
}

/** Items of a set or list: each item's primary value, with ± expanded into several items. */
function itemValues(n: Node, rewrites: string[]): Value[] {
  // One solution of `p=5,q=2;p=7,q=2`: its components form a tuple (named when assigned).
  if (n.k === 'list') {
    const v = listValues(n.items, rewrites).find((x) => x.t === 'tuple');
    if (!v) throw new TypeFail('nested list');
    return [v];
  }
  if (n.k === 'rel') {
    const v = relValues(n, rewrites)[0]!;
    return v.t === 'set' ? v.items : [v];
  }
  if (n.k !== 'group' && hasPm(n)) {
    rewrites.push('\\pm expanded to a set');
    return expandPm(n).map(scalarOnly);
  }
  return [scalarOnly(n)];
}

/** "a=2, b=3": distinct single-variable names, each assigned a constant; else null. */
function assignmentNames(items: Node[]): string[] | null {
  const names: string[] = [];
  for (const it of items) {
    if (it.k !== 'rel' || it.ops.length !== 1 || it.ops[0] !== '=') return null;
    const [l, r] = it.parts as [Node, Node];
    if (!isName(l) || l.k === 'group' || !isConstant(r) || r.k === 'list' || hasPm(r)) return null;
    names.push(nameKey(l));
  }
  return new Set(names).size === names.length ? names : null;
}

function listValues(items: Node[], rewrites: string[]): Value[] {
  const names = assignmentNames(items);
  if (names) {
    // Named values are not an unordered set: "a=2, b=3" ≠ "a=3, b=2".
    rewrites.push('assignments -> named tuple');
    const vals = items.map((it) => scalarOnly((it as Node & { k: 'rel' }).parts[1]!));
    return [{ t: 'tuple', items: vals, names }];
  }
  const vals = items.flatMap((x) => itemValues(x, rewrites));
  // "x<-1, x>1" (from "x<-1 or x>1"): a union of intervals in one variable.
  if (vals.every((v) => v.t === 'interval')) {
    const ivs = vals as (Value & { t: 'interval' })[];
    const v = ivs[0]!.v;
    if (ivs.every((x) => x.v === v)) return [{ t: 'interval', parts: ivs.flatMap((x) => x.parts), v }];
  }
  // A bare list of solutions is unordered (docs/contract.md#answer-equivalence sets); read as a tuple too ("3,1" ≡ "(3,1)").
  return [{ t: 'set', items: vals }, { t: 'tuple', items: vals }];
}

function groupValues(g: Node & { k: 'group' }, rewrites: string[]): Value[] {
  if (g.items.length === 1 && g.open === '(' && g.close === ')') return valuesOf(g.items[0]!, rewrites);
  const out: Value[] = [];
  const iv = g.items.length === 2 ? intervalOf(g) : null;
  if (g.open === '(' && g.close === ')') out.push({ t: 'tuple', items: g.items.map(scalarOnly) });
  if (iv) out.push({ t: 'interval', parts: [iv], v: null });
  if (out.length === 0) {
    if (g.items.length === 1) return valuesOf(g.items[0]!, rewrites);
    out.push({ t: 'tuple', items: g.items.map(scalarOnly) }); // "[1,2,3]": a list in brackets
  }
  return out;
}

function intervalOf(g: Node & { k: 'group' }): Iv | null {
  const [lo, hi] = g.items as [Node, Node];
  if (!isIntervalEnd(lo) || !isIntervalEnd(hi)) return null;
  return { lo, hi, loClosed: g.open === '[', hiClosed: g.close === ']' };
}

function isIntervalEnd(n: Node): boolean {
  return !['list', 'group', 'set', 'union', 'rel', 'matrix', 'base', 'pm', 'ratio'].includes(n.k) || (n.k === 'group' && n.items.length === 1);
}

function hasMatrix(n: Node): boolean {
  budget.check();
  switch (n.k) {
    case 'matrix':
      return true;
    case 'neg':
      return hasMatrix(n.x);
    case 'add':
    case 'sub':
    case 'mul':
      return hasMatrix(n.a) || hasMatrix(n.b);
    case 'pow':
      return hasMatrix(n.a);
    case 'group':
      return n.items.length === 1 && hasMatrix(n.items[0]!);
    default:
      return false;
  }
}

const MAX_MATRIX_POWER = 8;

/** The matrix a sum / difference / product / scalar multiple / small power of literal matrices is. */
function matrixOf(n: Node): Node[][] {
  const m = matrixEntries(n);
  // Entries share subtrees: a product of k matrices is a DAG whose walks double with each factor.
  for (const r of m) for (const x of r) treeSize(x);
  return m;
}

function matrixEntries(n: Node): Node[][] {
  budget.check();
  const matrixOf = (x: Node): Node[][] => {
    const m = matrixEntries(x);
    for (const r of m) for (const e of r) treeSize(e);
    return m;
  };
  const scalar = (x: Node): boolean => !hasMatrix(x);
  switch (n.k) {
    case 'matrix':
      return n.rows;
    case 'group':
      return matrixOf(n.items[0]!);
    case 'neg':
      return matrixOf(n.x).map((r) => r.map((x) => ({ k: 'neg', x }) as Node));
    case 'add':
    case 'sub': {
      const a = matrixOf(n.a);
      const b = matrixOf(n.b);
      if (a.length !== b.length || a.some((r, i) => r.length !== b[i]!.length)) throw new TypeFail('matrix sizes differ');
      return a.map((r, i) => r.map((x, j) => ({ k: n.k, a: x, b: b[i]![j]! }) as Node));
    }
    case 'mul': {
      if (scalar(n.a)) return matrixOf(n.b).map((r) => r.map((x) => ({ k: 'mul', a: n.a, b: x }) as Node));
      if (scalar(n.b)) return matrixOf(n.a).map((r) => r.map((x) => ({ k: 'mul', a: x, b: n.b }) as Node));
      const a = matrixOf(n.a);
      const b = matrixOf(n.b);
      const inner = b.length;
      if (a.some((r) => r.length !== inner) || b.some((r) => r.length !== b[0]!.length)) throw new TypeFail('matrix sizes do not multiply');
      return a.map((r) =>
        b[0]!.map((_, j) => r.map((x, k) => ({ k: 'mul', a: x, b: b[k]![j]! }) as Node).reduce((s, t) => ({ k: 'add', a: s, b: t }) as Node)),
      );
    }
    case 'pow': {
      // A square matrix to a small positive integer power: repeated products.
      const e = n.b.k === 'num' && !n.b.dec && n.b.v.d === 1n ? Number(n.b.v.n) : 0;
      if (e < 1 || e > MAX_MATRIX_POWER) throw new TypeFail('unsupported matrix power');
      let m: Node = n.a;
      for (let k = 1; k < e; k++) m = { k: 'mul', a: m, b: n.a };
      return matrixOf(m);
    }
    default:
      throw new TypeFail('not a matrix expression');
  }
}

function unionValue(items: Node[], rewrites: string[]): Value {
  const vals = items.map((x) => valuesOf(x, rewrites));
  // All sets: the union of their elements.
  if (vals.every((v) => v.some((r) => r.t === 'set'))) {
    return { t: 'set', items: vals.flatMap((v) => (v.find((r) => r.t === 'set') as Value & { t: 'set' }).items) };
  }
  const ivs: Iv[] = [];
  for (const v of vals) {
    const iv = v.find((r) => r.t === 'interval');
    const set = v.find((r) => r.t === 'set');
    if (iv && iv.t === 'interval') ivs.push(...iv.parts);
    else if (set && set.t === 'set') {
      for (const p of set.items) {
        if (p.t !== 'scalar') throw new TypeFail('union of non-intervals');
        ivs.push({ lo: p.node, hi: p.node, loClosed: true, hiClosed: true });
      }
    } else throw new TypeFail('union of non-intervals');
  }
  return { t: 'interval', parts: ivs, v: null };
}

function relValues(n: Node & { k: 'rel' }, rewrites: string[]): Value[] {
  const { ops, parts: ps } = n;
  if (ops.every((o) => o === '=')) return equationValues(ps, rewrites);
  if (ops.length === 1 && ops[0] === 'in') {
    const v = nameVar(ps[0]!);
    if (!isName(ps[0]!)) throw new TypeFail('membership of a non-name');
    rewrites.push('"x \\in" dropped');
    return valuesOf(ps[1]!, rewrites).map((r) => (r.t === 'interval' ? { ...r, v } : r));
  }
  if (ops.length === 1 && ops[0] === '!=') {
    const [l, r] = ps as [Node, Node];
    const v = nameVar(l) ?? nameVar(r);
    const c = l.k === 'var' ? r : l;
    if (v === null || !isConstant(c)) throw new TypeFail('unsupported relation');
    rewrites.push('"x \\ne c" -> two open intervals');
    const parts: Iv[] = [
      { lo: NEG_INF, hi: c, loClosed: false, hiClosed: false },
      { lo: c, hi: INF, loClosed: false, hiClosed: false },
    ];
    return [{ t: 'interval', parts, v }];
  }
  if (ops.every((o) => o === '<' || o === '<=' || o === '>' || o === '>=')) {
    const iv = inequalityInterval(ops, ps);
    if (iv) {
      rewrites.push('inequality -> interval');
      return [iv];
    }
    if (ops.length === 1) return [inequalityValue(ops[0]!, ps[0]!, ps[1]!)];
    // `1\le|z|\le\frac32`, `0<f(x)<1`: a chain around a non-linear term is all its inequalities.
    rewrites.push('inequality chain -> its inequalities');
    const items = ops.map((o, k) => inequalityValue(o, ps[k]!, ps[k + 1]!) as Value & { t: 'ineq' });
    return [{ t: 'ineqs', items, vars: [...new Set(items.flatMap((x) => x.vars))].sort() }];
  }
  throw new TypeFail('unsupported relation');
}

/** `x = 3`, `k=1`, `(p,q)=(3,2)`, `x=5+5+1=7=11` (a name, then a constant: the last one). */
function equationValues(ps: Node[], rewrites: string[]): Value[] {
  const first = ps[0]!;
  const last = ps[ps.length - 1]!;
  if (isName(first) && isConstant(last)) {
    rewrites.push(ps.length > 2 ? 'assignment chain -> its last value' : '"x =" assignment dropped');
    const vals = valuesOf(last, rewrites);
    // "x = 2" is also the equation x - 2 = 0, so it equals "2x + 3 = 7".
    if (first.k === 'var' && vals.length === 1 && vals[0]!.t === 'scalar') {
      vals.push({ t: 'eq', lhs: first, rhs: last, vars: [first.name], lhsIsName: true });
    }
    return vals;
  }
  if (ps.length === 2 && isName(last) && isConstant(first)) {
    rewrites.push('"= x" assignment dropped');
    return valuesOf(first, rewrites);
  }
  if (ps.every(isConstant)) {
    // A worked computation "5+5+1 = 11": its result is the last member.
    rewrites.push('constant chain -> its last value');
    return valuesOf(last, rewrites);
  }
  if (ps.length !== 2) throw new TypeFail('chained equation');
  const vars = [...freeVars(first), ...freeVars(last)];
  return [{ t: 'eq', lhs: first, rhs: last, vars: [...new Set(vars)].sort(), lhsIsName: isName(first) }];
}

function inequalityValue(op: RelOp, l: Node, r: Node): Value {
  // Normalise to f < 0 / f <= 0.
  const f: Node = op === '<' || op === '<=' ? { k: 'sub', a: l, b: r } : { k: 'sub', a: r, b: l };
  const vars = [...freeVars(f)].sort();
  return { t: 'ineq', f, strict: op === '<' || op === '>', vars };
}

interface Bound {
  at: Node;
  closed: boolean;
  value: number;
}

/**
 * A chain of linear one-variable inequalities as an interval (`0<x<1` -> (0,1), `-x>-1` ->
 * (-∞,1)): each adjacent pair bounds the variable; the bounds are intersected.
 */
function inequalityInterval(ops: RelOp[], ps: Node[]): Value | null {
  const vars = new Set<string>();
  ps.forEach((p) => freeVars(p, vars));
  if (vars.size !== 1) return null;
  const v = [...vars][0]!;
  let lower: Bound | null = null;
  let upper: Bound | null = null;
  for (let k = 0; k < ops.length; k++) {
    const b = bound(v, ops[k]!, ps[k]!, ps[k + 1]!);
    if (!b) return null;
    if (b.side === 'upper' && (!upper || b.value < upper.value || (b.value === upper.value && !b.closed))) upper = b;
    if (b.side === 'lower' && (!lower || b.value > lower.value || (b.value === lower.value && !b.closed))) lower = b;
  }
  const iv: Iv = {
    lo: lower?.at ?? NEG_INF,
    hi: upper?.at ?? INF,
    loClosed: lower?.closed ?? false,
    hiClosed: upper?.closed ?? false,
  };
  return { t: 'interval', parts: [iv], v };
}

/** The bound that `l op r` puts on v, when linear in v with a non-zero slope. */
function bound(v: string, op: RelOp, l: Node, r: Node): (Bound & { side: 'lower' | 'upper' }) | null {
  const less = op === '<' || op === '<=';
  const closed = op === '<=' || op === '>=';
  // Direct forms keep the written end point: v op c, c op v.
  if (l.k === 'var' && l.name === v && isConstant(r)) return mkBound(r, closed, less ? 'upper' : 'lower');
  if (r.k === 'var' && r.name === v && isConstant(l)) return mkBound(l, closed, less ? 'lower' : 'upper');
  // Linear g(v) = l - r = a v + b: v op' -b/a.
  const g: Node = { k: 'sub', a: l, b: r };
  const lin = linear(g, v);
  if (!lin) {
    // Irrational coefficients (\sqrt2 x < 1): a numeric end point.
    const nl = numericLinear(g, v);
    if (!nl) return null;
    const side = less !== nl.a < 0 ? 'upper' : 'lower';
    return mkBound({ k: 'float', v: -nl.b / nl.a }, closed, side);
  }
  const { a, b } = lin;
  const flip = a.n < 0n;
  const end = Q.div(Q.neg(b), a)!;
  const side = less !== flip ? 'upper' : 'lower';
  return mkBound({ k: 'num', v: end, dec: hasDecimal(g), src: Q.format(end) }, closed, side);
}

function mkBound(at: Node, closed: boolean, side: 'lower' | 'upper'): (Bound & { side: 'lower' | 'upper' }) | null {
  try {
    const [re, im] = parts(numEval(at));
    if (im !== 0 || Number.isNaN(re)) return null;
    return { at, closed, value: re, side };
  } catch (e) {
    if (e instanceof ExpressionError) return null;
    throw e;
  }
}

/** Float a, b with g(v) = a v + b (relative 1e-9 at five points); null if not linear. */
function numericLinear(g: Node, v: string): { a: number; b: number } | null {
  const at = (x: number): number | null => {
    try {
      const [re, im] = parts(numEval(g, new Map([[v, x]])));
      return im === 0 && Number.isFinite(re) ? re : null;
    } catch (e) {
      if (e instanceof ExpressionError) return null;
      throw e;
    }
  };
  const b = at(0);
  const g1 = at(1);
  if (b === null || g1 === null) return null;
  const a = g1 - b;
  if (Math.abs(a) < 1e-12) return null;
  for (const x of [2, -3, 1 / 7]) {
    const gx = at(x);
    if (gx === null || Math.abs(gx - (a * x + b)) > 1e-9 * Math.max(1, Math.abs(gx))) return null;
  }
  return { a, b };
}

/** Exact a, b with g(v) = a v + b, checked at five rational points; null if not linear. */
function linear(g: Node, v: string): { a: Q.Rational; b: Q.Rational } | null {
  const at = (x: Q.Rational) => exactEval(g, new Map([[v, x]]));
  const g0 = at(Q.ZERO);
  const g1 = at(Q.ONE);
  if (!g0 || !g1) return null;
  const a = Q.sub(g1, g0);
  if (a.n === 0n) return null;
  for (const x of [Q.rat(2n), Q.rat(-3n), Q.rat(1n, 7n)]) {
    const gx = at(x);
    if (!gx || !Q.eq(gx, Q.add(Q.mul(a, x), g0))) return null;
  }
  return { a, b: g0 };
}

// ---------------------------------------------------------------- answer -> canonical

const CHOICE_RE = /^[([]?([A-Ja-j])[)\]]?$/;
/** An option letter followed by the option's text: "B) 4.5 eV", "(C) 12", "D: none". */
const CHOICE_WITH_TEXT_RE = /^[([]?([A-J])(?:[)\]]|[)\].:]\s)\s*\S/;
const BASE_RE = /^\(?([0-9A-Za-z]+)\)?_\{?\(?(\d+)\)?\}?$/;

function baseReading(s: string): Value | null {
  const m = BASE_RE.exec(s.replace(/\s+/g, ''));
  if (!m) return null;
  const base = Number(m[2]);
  if (base < 2 || base > 36) return null;
  const digits = m[1]!.toLowerCase();
  for (const c of digits) if (parseInt(c, 36) >= base) return null;
  return { t: 'base', digits, base: m[2]! };
}

export function typeName(v: Value): string {
  switch (v.t) {
    case 'scalar':
      return v.vars.length ? 'expression' : 'number';
    case 'eq':
    case 'ineq':
    case 'ineqs':
      return 'relation';
    default:
      return v.t;
  }
}

/** Normalise, parse and type an answer: every reading, in preference order. */
export function canonicalise(raw: string): Canonical {
  const norm = normalise(raw);
  const { text, rewrites, percent } = norm;
  const readings: Reading[] = [];
  const push = (value: Value, tag: ReadingTag = 'plain') => readings.push({ value, tag });
  if (text === '') push({ t: 'empty' });
  else {
    const choice = CHOICE_RE.exec(text) ?? CHOICE_WITH_TEXT_RE.exec(text);
    if (choice) push({ t: 'choice', letter: choice[1]!.toUpperCase() });
    const base = baseReading(text);
    if (base) push(base);
    // `11:21` is a time of day and a ratio: both readings.
    const time = timeReading(text);
    if (time) push(time);
    if (!base && !hasWord(text)) parsedReadings(text, norm.percent, rewrites, push);
    // Words, unparseable answers, and all-letter answers ("No", "yes") also read as text.
    if (readings.length === 0 || hasWord(text) || /^[A-Za-z]{2,}(?:\s+[A-Za-z]+)*$/.test(text)) {
      push({ t: 'text', s: textKey(text) });
    }
  }
  const c: Canonical = {
    raw,
    normalised: text,
    rewrites,
    type: readings.length ? typeName(readings[0]!.value) : 'text',
    readings,
    percent,
  };
  const key = exactKeyOf(readings);
  if (key !== null) c.exactKey = key;
  return c;
}

/**
 * canonicalise under the parse's work budget (docs/answers.md, "Work and size bounds"): an answer
 * over a bound, or one that hits a bug, reads as text. `units` is the work the parse used.
 */
export function canonicalBounded(a: string): Canonical {
  const r = withBudget(limits.parseUnits, () => canonicalise(a));
  const e = r.error;
  const c =
    e === undefined
      ? r.value!
      : asText(a, e instanceof BudgetError ? `over the parse budget (${e.message}): compared as text` : `could not parse (${errorMessage(e)}): compared as text`);
  c.units = r.units;
  return c;
}

/** An answer read as text only, with the reason in its rewrites. */
export function asText(a: string, why: string): Canonical {
  const t = a.trim();
  return { raw: a, normalised: t, rewrites: [why], type: 'text', readings: [{ value: { t: 'text', s: textKey(t) }, tag: 'plain' }], percent: false };
}

/** `4:30`, `16:05`, `4:30 p.m.`, `4:30pm`, `5 p.m.`: a time of day (hours 0–23, minutes two digits). */
const TIME_RE = /^(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?$/i;

function timeReading(s: string): Value | null {
  const m = TIME_RE.exec(s);
  // Minutes or a.m./p.m. are needed: `5` alone is a number.
  if (!m || (m[2] === undefined && m[3] === undefined)) return null;
  const h = Number(m[1]);
  const min = Number(m[2] ?? '0');
  const half = m[3] ? (m[3].toLowerCase() === 'a' ? 'am' : 'pm') : null;
  if (min > 59 || h > 23 || (half && (h < 1 || h > 12))) return null;
  return { t: 'time', h, m: min, half };
}

function exactKeyOf(readings: Reading[]): string | null {
  if (readings.length !== 1 || readings[0]!.tag !== 'plain') return null;
  const v = readings[0]!.value;
  if (v.t !== 'scalar' || v.vars.length > 0 || hasDecimal(v.node)) return null;
  const e = exactEval(v.node);
  return e ? Q.format(e) : null;
}

function parsedReadings(text: string, percent: boolean, rewrites: string[], push: (v: Value, tag?: ReadingTag) => void): void {
  // A decimal comma: one comma between two digit runs (thousands were rewritten before).
  const dc = /^(-?\d+),(\d+)$/.exec(text);
  if (dc) push(scalarOnly(numNode(`${dc[1]}.${dc[2]}`)), 'decimal-comma');
  // European grouping: 1.234,5 and 1.000.000 (dots group thousands; never a valid decimal).
  const eu = /^(-?\d{1,3}(?:\.\d{3})+)(?:,(\d+))?$/.exec(text);
  if (eu && (eu[2] !== undefined || (eu[1]!.match(/\./g) ?? []).length > 1)) {
    push(scalarOnly(numNode(eu[1]!.replace(/\./g, '') + (eu[2] !== undefined ? `.${eu[2]}` : ''))), 'decimal-comma');
  }
  let node: Node;
  try {
    node = parseLatex(text);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    // A chain `a = b = c` with an unreadable member: its last member counts when it is a constant.
    const last = lastChainMember(text);
    if (last === null) return;
    try {
      node = parseLatex(last);
    } catch (e2) {
      if (e2 instanceof ParseError) return;
      throw e2;
    }
    if (!isConstant(node) || node.k === 'rel') return;
    rewrites.push('assignment chain -> its last value');
  }
  let vals: Value[];
  try {
    vals = valuesOf(node, rewrites);
  } catch (e) {
    if (e instanceof TypeFail || e instanceof ParseError) return;
    throw e;
  }
  vals.forEach((v, i) => {
    const tag: ReadingTag = v.t === 'tuple' && v.vector ? 'vector' : node.k === 'list' && i > 0 ? 'list-as-tuple' : 'plain';
    if (percent && v.t === 'scalar') {
      push(v, 'percent-raw');
      push({ t: 'scalar', node: { k: 'div', a: v.node, b: numNode('100') }, vars: v.vars }, 'percent-scaled');
    } else push(v, tag);
  });
}

/** The text after the last top-level `=` of a chain with at least two of them, else null. */
function lastChainMember(s: string): string | null {
  let depth = 0;
  let count = 0;
  let last = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '{' || c === '(' || c === '[') depth++;
    else if (c === '}' || c === ')' || c === ']') depth--;
    else if (c === '=' && depth === 0) {
      count++;
      last = i;
    }
  }
  return count >= 2 ? s.slice(last + 1).trim() : null;
}

/** Text compares case-insensitively, ignoring spaces (docs/contract.md#answer-equivalence). */
export function textKey(s: string): string {
  // Quotes and a final "!"/"?" do not change a word answer ("Evelyn!" = "Evelyn").
  const k = s.toLowerCase().replace(/[\s"'\u2018\u2019\u201c\u201d]+/g, '');
  // A loop, not `[.!?,;:]+$`, which is quadratic on a long run of `!` that does not end the text.
  let j = k.length;
  while (j > 0 && '.!?,;:'.includes(k[j - 1]!)) j--;
  return k.slice(0, j);
}
