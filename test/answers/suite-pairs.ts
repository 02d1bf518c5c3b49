// The answer pairs of the answer suites, in one list (docs/answers.md, "Work and size bounds"):
// the public vectors, the Math-Verify cases (each side extracted as its test does), the fuzz
// corpus, the hostile answers, and the heaviest decided kinds (solution sets judged at ~1000 test
// points). Used by deterministic-budget.test.ts and bench/budget-bench.ts.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { extractAnswer } from '../../src/engine/answers/answers';
import { HOSTILE_ANSWERS } from './hostile-answers';
import { loadVectors } from './helpers';

interface MvCase {
  gold: string;
  pred: string;
  config: { match_types: string[] };
  gold_is_response: boolean;
  pred_is_response: boolean;
}

/** Solution sets compared point by point: the most work any decided pair of the suites does. */
export const SOLUTION_SET_PAIRS: [string, string][] = [
  ['1\\le x^2\\le 4', '[-2,-1]\\cup[1,2]'],
  ['(1,3)', '(x-1)(x-3)<0'],
  ['x^2<4', '|x|<2'],
  ['(-\\infty,-2]\\cup[2,\\infty)', 'x^2 \\ge 4'],
  ['(-\\sqrt2,\\sqrt2)', 'x^2<2'],
  ['[-2,2]', 'x^2<4'],
  ['1<x^2+y^2<4', '1<y^2+x^2<4'],
];

/**
 * Decided pairs up to ~8× heavier than any of the suites' (120 K to 700 K units; tens of ms
 * each, more on a cold thread): a solution set judged at every test point on a sum of k terms.
 * Under a clock, a busy, slow or cold thread read some of them as "not decided"; under the work
 * budget they are equal everywhere.
 */
export const GRADED_PAIRS: [string, string][] = [10, 15, 20, 25, 30, 35, 40, 50, 60].map((k) => ['|x|<2', `\\sum_{k=1}^{${k}} \\frac{x^2-4}{k} < 0`]);

/** One of them (40 terms, ~470 K units). */
export const HEAVY_PAIR: [string, string] = GRADED_PAIRS[6]!;

/** A pair over the comparison budget: always "not decided", after the same units. */
export const OVER_BUDGET_PAIR: [string, string] = ['\\sum_{k=1}^{400} x^k < 1', '\\sum_{k=1}^{400} x^k \\le 1'];

function mathVerifyPairs(): [string, string][] {
  const cases = readFileSync(resolve(process.cwd(), 'test/answers/vectors/math-verify.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as MvCase);
  const out: [string, string][] = [];
  for (const c of cases) {
    const lastNumber = c.config.match_types.includes('expr');
    const g = c.gold_is_response ? extractAnswer(c.gold, { lastNumber }) : c.gold;
    const p = c.pred_is_response ? extractAnswer(c.pred, { lastNumber }) : c.pred;
    if (g !== null && p !== null) out.push([g, p]);
  }
  return out;
}

/** Every pair, in a fixed order. */
export function suitePairs(): [string, string][] {
  const out: [string, string][] = [];
  for (const v of loadVectors()) {
    const b = v.b_is_response ? extractAnswer(v.b) : v.b;
    if (b !== null) out.push([v.a, b]);
  }
  out.push(...mathVerifyPairs());
  const corpus = resolve(process.cwd(), 'test/fuzz/corpus');
  out.push(...(JSON.parse(readFileSync(resolve(corpus, 'pairs.json'), 'utf8')) as [string, string][]));
  for (const s of JSON.parse(readFileSync(resolve(corpus, 'latex.json'), 'utf8')) as string[]) out.push([s, '1']);
  for (const s of Object.values(HOSTILE_ANSWERS)) out.push([s, '0']);
  out.push(...SOLUTION_SET_PAIRS);
  return out;
}
