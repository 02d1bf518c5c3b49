// Notations graders accept and we used to miss (docs/answers.md): thousands separators from
// MATH, several boxes in the final statement, the last math span, names and labels, \approx,
// `;` tuples and solution lists, non-linear inequality chains, `or` without spaces, \sum/\prod,
// times of day, matrices, doubled backslashes. Each case is decided through `equal` and
// `extract` too, as a user would run them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { answersEqual, explainEquality, extractAnswer } from '../../src/engine/answers/answers';
import { clearAnswerCaches } from '../../src/engine/answers/classes';
import { runEqual } from '../../src/cli/equal';
import { runExtract } from '../../src/cli/extract-command';
import { captureIO } from './helpers';

const EQUAL: [string, string, boolean][] = [
  // `,\!` and `{,}` between digit groups
  ['10,\\!080', '10080', true], ['\\$16,\\!386.20', '16386.2', true], ['900,\\!000,\\!000', '900000000', true],
  ['11,\\! 111,\\! 111,\\! 100', '11111111100', true], ['14{,}916', '14916', true], ['14 {, }916', '14916', true],
  ['2{,}500{,}001', '2500001', true], ['3,\\!000', '3', false], ['32, 349', '32349', false],
  // \approx
  ['x\\approx 11', '11', true], ['\\frac13 \\approx 0.333', '\\frac13', true], ['y \\approx 2.5', '2.5', true],
  ['\\sqrt2\\approx1.414', '\\sqrt{2}', true], ['x = 1/3 \\approx 0.33', '\\frac{1}{3}', true], ['\\frac{2}{3}\\approx 0.667', '0.667', false],
  // `;`
  ['(0;-2;0)', '(0,-2,0)', true], ['(1;2)', '(1,2)', true], ['(1;2)', '(2,1)', false],
  ['p=5,q=2;p=7,q=2', '(5,2),(7,2)', true], ['x=1,y=2;x=3,y=4', '(1,2),(3,4)', true], ['x=1,y=2;x=3,y=4', '(1,2),(3,5)', false],
  // inequality chains around a non-linear term
  ['1\\le|z|\\le\\frac32', '1\\le |z| \\le 1.5', true], ['1\\le x^2\\le 4', '1 \\leq x^{2} \\leq 4', true],
  ['0<f(x)<1', '0 < f(x) < 1', true], ['0<f(x)<1', '0 < f(x) < 2', false], ['1\\le x^2\\le 4', '[-2,-1]\\cup[1,2]', true],
  ['2 \\ge |z| \\ge 1', '1\\le|z|\\le2', true], ['1<x^2+y^2<4', '1<y^2+x^2<4', true], ['1<x^2+y^2<4', '1<x^2+y^2<9', false],
  // or without spaces
  ['(11,7)or(7,11)', '(11,7),(7,11)', true], ['1or2', '1,2', true], ['3or4', '\\{3,4\\}', true], ['x=1or x=2', '1,2', true], ['1or2', '1,3', false],
  // \sum and \prod with numeric bounds
  ['\\sum_{k=1}^{10} k', '55', true], ['\\prod_{k=1}^{5} k', '120', true], ['\\sum_{i=1}^{4} i^2', '30', true],
  ['\\sum_{k=0}^{3} 2^k', '15', true], ['\\sum_{n=1}^{3} nx', '6x', true], ['\\sum\\limits_{j=2}^{4} (j-1)', '6', true], ['\\sum_{k=1}^{10} k', '56', false],
  // units and text around a value
  ['\\text{4:30 p.m.}', '4:30', true], ['\\text{4:30 p.m.}', '4:30 a.m.', false], ['4:30 pm', '16:30', true],
  ['\\text{9:15 a.m.}', '9:15', true], ['12:00', '1:00', false], ['\\text{5 cm}', '5', true], ['7\\text{ dollars}', '7', true],
  // matrices
  ['\\begin{pmatrix}1\\\\2\\end{pmatrix}', '\\begin{pmatrix}1&2\\end{pmatrix}', false],
  ['\\begin{bmatrix}3\\\\4\\\\5\\end{bmatrix}', '\\begin{pmatrix}3&4&5\\end{pmatrix}', false],
  ['\\begin{pmatrix}1\\\\2\\end{pmatrix}', '(1,2)', true], ['\\begin{pmatrix}1&2\\end{pmatrix}', '(1,2)', true],
  ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}+\\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}', '\\begin{pmatrix}2&3\\\\4&5\\end{pmatrix}', true],
  ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}', '\\begin{pmatrix}2&1\\\\4&3\\end{pmatrix}', true],
  ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}\\cdot\\begin{pmatrix}1\\\\1\\end{pmatrix}', '\\begin{pmatrix}3\\\\7\\end{pmatrix}', true],
  ['2\\begin{pmatrix}1&2\\end{pmatrix}', '\\begin{pmatrix}2&4\\end{pmatrix}', true],
  ['\\begin{pmatrix}1&1\\\\0&1\\end{pmatrix}^3', '\\begin{pmatrix}1&3\\\\0&1\\end{pmatrix}', true],
  ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}-\\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}', '\\begin{pmatrix}0&1\\\\2&4\\end{pmatrix}', false],
  // doubled backslashes
  ['\\\\frac{1}{2}', '\\frac12', true], ['x \\\\le 3', 'x\\le 3', true], ['\\\\sqrt{2}', '\\sqrt2', true],
  ['\\\\left(1,2\\\\right)', '(1,2)', true], ['\\\\dfrac{3}{4}', '0.75', true], ['\\\\frac{1}{2}', '\\frac13', false],
  // a name or label equal to a value
  ['|AB|=1', '1', true], ['AB=4,CD=5', '4, 5', true], ['AB=4,CD=5', 'CD=5,AB=4', true], ['AB=4,CD=5', '5, 4', false],
  ['\\frac{NO}{BO}=\\frac{1}{\\sqrt6}', '\\frac{1}{\\sqrt{6}}', true], ['V_1:V_2=11:21', '11:21', true], ['V_1:V_2=11:21', '21:11', false],
  ['BC=7', '7', true], ['|PQ| = 2\\sqrt3', '2\\sqrt{3}', true], ['\\overline{AB}=5', '5', true], ['11:21', '(11,21)', false],
  ['\\angle ABC=30^\\circ', '30', true], ['ABC=5', '5', true], ['S_1:S_2=1:4', '1:4', true], ['YES', 'yes', true],
  ['\\text{5 p.m.}', '5:00 pm', true], ['\\text{5 p.m.}', '17:00', true], ['\\text{5 p.m.}', '5:00 a.m.', false],
  // what must stay as it was
  ['100000', '100001', false], ['x+1', 'y+1', false], ['2x+3=7', 'x=2', true], ['xy=6', '6', false],
];

const EXTRACT: [string, string | null][] = [
  ['So the solutions are \\boxed{2} and \\boxed{6}.', '2, 6'],
  ['Thus \\boxed{(2,2)} \\text{and} \\boxed{(6,2)}', '(2,2), (6,2)'],
  ['The roots are $\\boxed{-1}$, $\\boxed{3}$.', '-1, 3'],
  ['\\[ \\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}. \\]', '-2, 1'],
  ['first \\boxed{5}, then we get \\boxed{6}', '6'],
  ['Wait: \\boxed{5} or \\boxed{6}', '6'],
  ['Therefore $x \\geq 5$ is the solution.', 'x \\geq 5'],
  ['The domain is \\((0, 1]\\) here.', '(0, 1]'],
  ['Hence\n$$\n\\frac{7}{2}\n$$', '\\frac{7}{2}'],
  ['so we get $$\\frac{1}{2}.$$', '\\frac{1}{2}'],
  ['the sequence is $1, 2, 3, ...$', '1, 2, 3, ...'],
  ['Soucis : 2,74 $ a..', '2,74'],
  ['We get $y=3$ and so there are 12 ways', '12'],
  ['It costs $5 and more', '5'],
  ['\\boxed{255}. Final Answer: The final answer is $10,455$.', '10,455'],
  ['\\boxed{7}. So answer is consistent.', '7'],
  ['\\boxed{\\frac{1}{2}}. So the answer is 1 out of 2.', '\\frac{1}{2}'],
  ['The total is 10,\\!080 dollars', '10,\\!080'],
  ['so we get 1{,}000 in the end', '1{,}000'],
  ['values 32, 349', '349'],
  ['no answer here', null],
];

// These tests are about verdicts. A solution-set comparison checks ~1000 test points; its work
// is counted in units, not time, so the default budget decides it the same way on a loaded machine.
before(() => clearAnswerCaches());
after(() => clearAnswerCaches());

test('themes: answersEqual decides each notation, symmetrically', () => {
  for (const [a, b, want] of EQUAL) {
    assert.equal(answersEqual(a, b), want, `${a} | ${b}`);
    assert.equal(explainEquality(b, a).equal, want, `${b} | ${a}`);
  }
});

test('themes: extraction takes the final statement', () => {
  for (const [r, want] of EXTRACT) assert.equal(extractAnswer(r), want, JSON.stringify(r));
});

test('themes through the CLI: equal --jsonl and extract', async () => {
  const io = captureIO(EQUAL.map(([a, b]) => JSON.stringify({ a, b })).join('\n') + '\n');
  assert.equal(await runEqual(['--jsonl', '-'], io.io), 0);
  const outs = io.out().trim().split('\n').map((l) => (JSON.parse(l) as { equal: boolean }).equal);
  assert.deepEqual(outs, EQUAL.map(([, , want]) => want));
  for (const [r, want] of EXTRACT) {
    const c = captureIO(r);
    assert.equal(await runExtract(['-'], c.io), 0);
    assert.equal(JSON.parse(c.out()), want, JSON.stringify(r));
  }
});
