// `consensus-lens compare` end to end (built dist/cli.js) on two hand-made fixture runs
// (test/fixtures/compare: 4 roll-outs per group, figures computed by hand below), two operators
// on one run, and the usage errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRunContext, prepareGroup, scoreGroup, answersEqual, type RunsComparison } from '../src/engine';
import { readRun } from '../src/logs/log-layer';

const A = 'test/fixtures/compare/run-a';
const B = 'test/fixtures/compare/run-b';

/** --json prints snake_case keys (as every JSON of the command); back to the engine's names. Series ids stay. */
function camel(v: unknown, inSeries = false): unknown {
  if (Array.isArray(v)) return v.map((x) => camel(x));
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [inSeries ? k : k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), camel(x, k === 'series')]));
}

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// Run A (vote):  step 1  q1 [3,3,5,5] gt 5: tie → "3" (first class), wrong, reward acc 0, maj 0.5
//                        q2 [7,7,7,2] gt 7: "7" right, reward acc 1, maj 0.75
//                step 2  q1 [5,5,5,3] gt 5: right, 1, 0.75;  q2 [7,7,7,7] gt 7: right, 1, 1, saturated
//                step 3  q3 [1,2,2,2] gt 1: "2" wrong, reward acc 0, maj 0.75
// Run B (vote):  step 1  q1 [5,5,3,3] gt 5: "5" right, 1, 0.5;  q2 [2,2,7,2] gt 7: "2" wrong, 0, 0.75
//                step 2  q1, q2 unanimous and right (both saturated)
//                step 3  q4 [8,8,9,8] no ground truth, 0.75
test('compare: per-step figures, alarms, and where the labels part, as computed by hand', () => {
  const r = cli(['compare', A, B, '--json', '--jobs', '0']);
  assert.equal(r.code, 0, r.err);
  assert.ok(r.out.includes('"label_accuracy":{"correct":3'), 'snake_case keys');
  const c = camel(JSON.parse(r.out)) as RunsComparison;
  assert.equal(c.format, 'consensus-lens/compare/v1');
  assert.deepEqual(c.steps, [1, 2, 3]);
  const [a, b] = c.runs;
  assert.equal(a.operator, 'majority');
  assert.deepEqual([a.groups, a.rollouts, a.steps], [5, 20, 3]);
  assert.deepEqual(a.labelAccuracy, { correct: 3, over: 5, value: 0.6 });
  assert.deepEqual(b.labelAccuracy, { correct: 3, over: 4, value: 0.75 });
  assert.equal(a.rewardAccuracy, 0.6);
  assert.equal(b.rewardAccuracy, 0.75);
  assert.deepEqual(a.series.label_accuracy, [0.5, 1, 0]);
  assert.deepEqual(b.series.label_accuracy, [0.5, 1, null]);
  assert.deepEqual(a.series.reward_accuracy, [0.5, 1, 0]);
  assert.deepEqual(b.series.reward_accuracy, [0.5, 1, null]);
  assert.deepEqual(a.series.majority_ratio, [0.625, 0.875, 0.75]);
  assert.deepEqual(b.series.majority_ratio, [0.625, 1, 0.75]);
  // Groups with signal under the vote: only the unanimous groups have none.
  assert.deepEqual(a.series.signal_groups, [1, 0.5, 1]);
  assert.deepEqual(b.series.signal_groups, [1, 0, 1]);
  assert.deepEqual(a.series.rollouts_seen, [8, 16, 20]);
  for (const g of [...a.series.gate, ...b.series.gate]) assert.ok(g !== null && g > 0 && g <= 1);
  assert.deepEqual([a.alarms, b.alarms], [[], []]);
  // q1 and q2 in both (q3 only in A, q4 only in B), each twice: 4 pairs; they part at step 1.
  assert.deepEqual(c.shared, { questions: 2, pairs: 4, compared: 4, agree: 2, part: 2, partWithTruth: 2, aRight: 1, bRight: 1, neitherRight: 0, withTruth: 4, aCorrect: 3, bCorrect: 3 });
  assert.deepEqual(c.disagreements, [
    { questionId: 'q1', occurrence: 0, stepA: 1, stepB: 1, labelA: '3', labelB: '5', truth: '5', agrees: 'b' },
    { questionId: 'q2', occurrence: 0, stepA: 1, stepB: 1, labelA: '7', labelB: '2', truth: '7', agrees: 'a' },
  ]);
  // The text has the same numbers.
  const t = cli(['compare', A, B]);
  assert.equal(t.code, 0, t.err);
  assert.match(t.out, /label accuracy 60\.0% \(3\/5\), reward accuracy 0\.60/);
  assert.match(t.out, /labels agree on 2, part on 2 \(50\.0%\)/);
  assert.match(t.out, /step 1 {2}question q1: A "3" {2}B "5"; ground truth "5": B/);
  assert.match(t.out, /reward accuracy = share of roll-outs/);
  // Worker threads give the same comparison as in-process.
  assert.deepEqual(camel(JSON.parse(cli(['compare', A, B, '--json']).out)), c);
});

test('compare: two operators on one run — the parting groups are exactly where CoRE overturns the vote', async () => {
  const r = cli(['compare', A, A, '--operator-a', 'majority', '--operator-b', 'core', '--json', '--jobs', '0']);
  assert.equal(r.code, 0, r.err);
  const c = camel(JSON.parse(r.out)) as RunsComparison;
  assert.deepEqual(c.runs.map((x) => x.operator), ['majority', 'core']);
  const expected: { step: number; q: string; vote: string | null; core: string | null }[] = [];
  const ctx = createRunContext();
  for await (const g of readRun(A, () => {})) {
    const s = scoreGroup(prepareGroup(g, { reasoning: true }), { operators: ['majority', 'core'] }, ctx);
    const v = s.results.majority!.label;
    const k = s.results.core!.label;
    if (!(v !== null && k !== null && answersEqual(v, k))) expected.push({ step: g.step, q: g.questionId, vote: v, core: k });
  }
  assert.equal(c.shared.pairs, 5);
  // q1 at step 1 is a 2–2 tie: the vote takes the first class ("3"); CoRE the cohesive, confident
  // "5" roll-outs (the fixture writes them so) — the one overturn, and the ground truth's answer.
  assert.deepEqual(expected.map((e) => [e.step, e.q, e.vote, e.core]), [[1, 'q1', '3', '5']]);
  assert.equal(c.shared.part, 1);
  assert.equal(c.disagreements[0].agrees, 'b');
  assert.deepEqual(c.runs[1].labelAccuracy, { correct: 4, over: 5, value: 0.8 });
  assert.deepEqual(c.disagreements.map((d) => [d.stepA, d.questionId, d.labelA, d.labelB]), expected.map((e) => [e.step, e.q, e.vote, e.core]));
  // The vote's side is run A's figures of the first test.
  assert.deepEqual(c.runs[0].labelAccuracy, { correct: 3, over: 5, value: 0.6 });
  // CoRE's graded rewards keep signal in the unanimous group the vote cannot learn from.
  assert.equal(c.runs[1].series.signal_groups[1], 1);
});

test('compare: usage errors are clear', () => {
  for (const [args, msg] of [
    [['compare', A], /takes two runs/],
    [['compare', A, A], /with itself under one operator/],
    [['compare', A, B, '--operator-b', 'cor'], /unknown operator "cor"/],
    [['compare', '-', B], /standard input/],
  ] as const) {
    const r = cli([...args]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, msg);
  }
  const missing = cli(['compare', A, 'test/fixtures/compare/no-such-run']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /no-such-run/);
});
