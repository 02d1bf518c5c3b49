// Time per unit of the answers' work budget (docs/answers.md, "Work and size bounds"): the
// answer suites' pairs (test/answers/suite-pairs.ts) parsed and compared from cold caches, their
// units counted and their time measured (best of 3 rounds after a warm-up round), so ns/unit for
// parses and for comparisons; the largest units a decided parse or comparison of the suites uses
// (the budget's margin); and what a budget costs on this machine at worst: the median time of a
// comparison and of a parse that run until their budget is spent. One JSON line:
//   {"rows":[[what, ours, baseline, ratio, target, ok], …], …figures}
// Run: node --import tsx bench/budget-bench.ts
import { canonicalOf, clearAnswerCaches } from '../src/engine/answers/classes';
import { compareCanonical } from '../src/engine/answers/equivalence';
import { limits } from '../src/engine/answers/budget';
import { GRADED_PAIRS, OVER_BUDGET_PAIR, suitePairs } from '../test/answers/suite-pairs';

interface Round {
  parseUnits: number;
  parseMs: number;
  compareUnits: number;
  compareMs: number;
  maxParse: number;
  maxCompare: number;
  /** Slowest ns/unit of a comparison of at least 100 K units. */
  worstNsPerUnit: number;
}

function round(pairs: [string, string][]): Round {
  clearAnswerCaches();
  const r: Round = { parseUnits: 0, parseMs: 0, compareUnits: 0, compareMs: 0, maxParse: 0, maxCompare: 0, worstNsPerUnit: 0 };
  for (const [a, b] of pairs) {
    const t0 = performance.now();
    const ca = canonicalOf(a);
    const cb = canonicalOf(b);
    const t1 = performance.now();
    const c = compareCanonical(ca, cb);
    const t2 = performance.now();
    for (const x of [ca, cb]) {
      r.parseUnits += x.units ?? 0;
      if (!x.rewrites.some((w) => w.startsWith('over the parse budget'))) r.maxParse = Math.max(r.maxParse, x.units ?? 0);
    }
    r.parseMs += t1 - t0;
    r.compareUnits += c.units ?? 0;
    r.compareMs += t2 - t1;
    if (!c.undecided) r.maxCompare = Math.max(r.maxCompare, c.units ?? 0);
    if ((c.units ?? 0) >= 100_000) r.worstNsPerUnit = Math.max(r.worstNsPerUnit, ((t2 - t1) * 1e6) / c.units!);
  }
  return r;
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/** Median time of `run` from cold caches, `k` times. */
function coldMs(k: number, run: () => void): number {
  return median(
    Array.from({ length: k }, () => {
      clearAnswerCaches();
      const t = performance.now();
      run();
      return performance.now() - t;
    }),
  );
}

const suites = suitePairs();
round(suites); // warm-up: JIT and mathjs, as in a long-running scorer
const rounds = [0, 1, 2].map(() => round(suites));
const best = rounds.reduce((x, y) => (x.parseMs + x.compareMs <= y.parseMs + y.compareMs ? x : y));
const graded = median([0, 1, 2].map(() => round(GRADED_PAIRS).worstNsPerUnit));

const [oa, ob] = OVER_BUDGET_PAIR;
const overCompare = compareCanonical(canonicalOf(oa), canonicalOf(ob));
const compareWorstMs = coldMs(5, () => {
  const x = canonicalOf(oa);
  const y = canonicalOf(ob);
  const t = performance.now();
  compareCanonical(x, y);
  return performance.now() - t;
});
// A parse that spends its whole budget (1000 exact factorials added up).
const OVER_PARSE = '\\sum_{k=1}^{1000} k!';
clearAnswerCaches();
const overParse = canonicalOf(OVER_PARSE);
const parseWorstMs = coldMs(3, () => canonicalOf(OVER_PARSE));

const ns = (ms: number, units: number): number => (ms * 1e6) / units;
const figures = {
  pairs: suites.length,
  parseUnits: best.parseUnits,
  parseMs: best.parseMs,
  parseNsPerUnit: ns(best.parseMs, best.parseUnits),
  compareUnits: best.compareUnits,
  compareMs: best.compareMs,
  compareNsPerUnit: ns(best.compareMs, best.compareUnits),
  maxDecidedParseUnits: best.maxParse,
  maxDecidedCompareUnits: best.maxCompare,
  gradedWorstNsPerUnit: graded,
  parseBudget: limits.parseUnits,
  compareBudget: limits.compareUnits,
  overCompareUnits: overCompare.units,
  compareWorstMs,
  overParseUnits: overParse.units,
  overParseReason: overParse.rewrites.join('; '),
  parseWorstMs,
};
const f = (x: number, d = 1): string => x.toFixed(d);
const k = (x: number): string => `${(x / 1000).toFixed(0)} K`;
const rows = [
  ['answer suites: parse, ns per unit', `${f(figures.parseNsPerUnit)} ns (${k(best.parseUnits)} units, ${f(best.parseMs, 0)} ms)`, '—', '—', '—', null],
  ['answer suites: comparison, ns per unit', `${f(figures.compareNsPerUnit)} ns (${k(best.compareUnits)} units, ${f(best.compareMs, 0)} ms)`, '—', '—', '—', null],
  ['largest decided parse / comparison of the suites vs its budget', `${k(best.maxParse)} / ${k(best.maxCompare)} units`, `${k(limits.parseUnits)} / ${k(limits.compareUnits)}`, `${f(limits.parseUnits / best.maxParse)}× / ${f(limits.compareUnits / best.maxCompare)}×`, '≥ 5× margin', limits.parseUnits >= 5 * best.maxParse && limits.compareUnits >= 5 * best.maxCompare],
  ['a comparison that spends its budget (solution sets of two 400-term sums)', `${f(compareWorstMs, 0)} ms (${k(overCompare.units ?? 0)} units)`, '—', `${f(ns(compareWorstMs, overCompare.units ?? 1))} ns/unit`, '—', null],
  ['a parse that spends its budget (1000 exact factorials added up)', `${f(parseWorstMs, 0)} ms (${k(overParse.units ?? 0)} units)`, '—', `${f(ns(parseWorstMs, overParse.units ?? 1))} ns/unit`, '—', null],
  ['slowest heavy comparison (graded solution sets, ≥ 100 K units)', `${f(graded)} ns/unit`, '—', '—', '—', null],
];
console.log(JSON.stringify({ rows, ...figures }));
