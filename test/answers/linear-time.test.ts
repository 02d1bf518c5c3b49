// Degenerate model output must cost time linear in its length (docs/answers.md, "Limits"):
// collapsed RL models write an answer followed by 100 K spaces, `!!!!…`, `……`, `$$$…`, `。。。…`.
// Every answer form is followed by a run of every filler, at two sizes; the time of the larger
// must stay within a linear budget of the smaller (a quadratic pattern costs 10× more per byte
// at 10× the size). Ratios of best-of-three totals, not absolute times: the machine is shared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAnswer } from '../../src/engine/answers/answers';
import { canonicalOf, clearAnswerCaches } from '../../src/engine/answers/classes';
import { normalise, MAX_NORMALISED } from '../../src/engine/answers/normalise';
import { canonicalBounded } from '../../src/engine/answers/typed';

const FORMS = [
  'the answer is 4', 'The final answer is $4$', 'Final Answer: 4', '\\boxed{4}', '\\boxed{1} and \\boxed{2}',
  '$4$', '\\(4\\)', '4', '4 4/9', '10,\\!080', 'answer: (B)', 'x = 4', 'x \\approx 4', '1or2', '(0;-2;0)',
];
const FILLERS = [
  ' ', '!', '\u2026', '$', '\u3002', '.', '\n', ',', ';', ':', '\\', '{', '}', '(', '1', 'a', '*', '=', '%',
  '$$', '\\(', '\\[', '**', '\\!', ',\\!', '{,}', '\\boxed{', '0.', ' or', ' and', '\\approx', '^', '_', '\\sum',
];

function inputs(size: number): string[] {
  return FORMS.flatMap((f) => FILLERS.map((c) => f + c.repeat(Math.ceil(size / c.length)).slice(0, size)));
}

function bestOfThree(run: () => void): number {
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    run();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/** At 10× the size a linear cost is ~10×; allow 30× (noise, GC) — a quadratic one is ~100×. */
const BUDGET = 30;

test('extraction is linear: every answer form followed by 100 KB and 1 MB of every filler', () => {
  const small = inputs(100_000);
  const large = inputs(1_000_000);
  const ts = bestOfThree(() => small.forEach((s) => extractAnswer(s)));
  const tl = bestOfThree(() => large.forEach((s) => extractAnswer(s)));
  assert.ok(tl <= BUDGET * ts + 50, `1 MB: ${tl.toFixed(0)} ms, 100 KB: ${ts.toFixed(0)} ms`);
});

test('the answer survives the filler after it', () => {
  for (const c of [' ', '!', '\u2026', '\u3002', '\n', '.']) {
    const run = c.repeat(1_000_000);
    assert.equal(extractAnswer('the answer is 4' + run), '4', JSON.stringify(c));
    assert.equal(extractAnswer('so \\boxed{4}' + run), '4', JSON.stringify(c));
    assert.equal(extractAnswer('Final Answer: $\\frac{3}{4}$' + run), '\\frac{3}{4}', JSON.stringify(c));
  }
  assert.equal(extractAnswer('\\boxed{4}' + '$'.repeat(1_000_000)), '4');
  assert.equal(extractAnswer('$$'.repeat(500_000) + ' so 7'), '7');
});

test('normalisation and the typed parse are linear below their length limit, and skipped above it', () => {
  const size = (n: number) => inputs(n).map((s) => s.slice(0, n));
  const small = size(MAX_NORMALISED / 10);
  const large = size(MAX_NORMALISED - 10);
  const run = (xs: string[]) => () => xs.forEach((s) => {
    normalise(s, true);
    canonicalBounded(s); // under the parse budget, as canonicalOf parses (a 2000-deep `!` chain is over it)
  });
  const ts = bestOfThree(run(small));
  const tl = bestOfThree(run(large));
  assert.ok(tl <= BUDGET * ts + 50, `${MAX_NORMALISED - 10} chars: ${tl.toFixed(0)} ms, ${MAX_NORMALISED / 10}: ${ts.toFixed(0)} ms`);
  // Above the limit nothing runs but a trim: a 1 MB answer is text.
  const huge = '4' + '!'.repeat(1_000_000) + 'x';
  assert.deepEqual(normalise(huge).rewrites, [`longer than ${MAX_NORMALISED} characters: not normalised`]);
  clearAnswerCaches();
  assert.equal(canonicalOf(huge).type, 'text');
});

test('deep nesting, 100 KB answers and huge exponents are bounded', () => {
  clearAnswerCaches();
  const deep = '\\boxed{' + '{'.repeat(50_000) + '4' + '}'.repeat(50_000) + '}';
  assert.equal(extractAnswer(deep)!.length, 100_001);
  const nested = '('.repeat(1_500) + '4' + ')'.repeat(1_500);
  assert.equal(canonicalOf(nested).type, 'text');
  assert.equal(canonicalOf('x'.repeat(100_000)).type, 'text');
  assert.equal(canonicalOf('2^{10^{10^{10}}}').readings.length > 0, true);
});

test('the last-number fallback is linear on a crafted thousands-grouped digit run', () => {
  // A run of ",234" groups that fails at its end (a 4-digit group), then letters, so the tail
  // window finds no number and the whole 32 KB is scanned: once quadratic (~900× normal text).
  const crafted = (n: number) => ('1' + ',234'.repeat(n / 4)).slice(0, n - 2200) + ',2345' + 'x'.repeat(2195);
  const normal = (n: number) => 'we compute the sum 12 then 345 and so on. '.repeat(n / 40).slice(0, n);
  const c = [crafted(40_000), crafted(400_000)];
  const n = [normal(40_000), normal(400_000)];
  assert.equal(extractAnswer(c[0]!), '2345');
  assert.equal(extractAnswer('it costs 1,234,567 dollars'), '1,234,567');
  const tc = bestOfThree(() => c.forEach((s) => extractAnswer(s)));
  const tn = bestOfThree(() => n.forEach((s) => extractAnswer(s)));
  assert.ok(tc <= BUDGET * tn + 50, `crafted: ${tc.toFixed(0)} ms, normal text: ${tn.toFixed(0)} ms`);
});
