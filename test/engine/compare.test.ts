// Run comparison and sweep logic: flip detection by answer class, shift distributions,
// advantage sign changes, accuracy only from logged ground truth, the agreement matrix, export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answersEqual, prepareGroup, scoreGroup, type Group, type OperatorResult, type PreparedGroup, type Rollout } from '../../src/engine';
import {
  addAgreement,
  addGroup,
  agreementRates,
  csvField,
  diffGroup,
  diffsToCsv,
  diffsToJsonl,
  emptyAgreement,
  emptyComparison,
  mergeAgreement,
  mergeComparison,
  runAccuracy,
  signOf,
  stepSummaries,
  type GroupDiff,
} from '../../src/engine/analysis/setting-compare';
import { rng, synthRollouts } from '../../scripts/synth';

function contested(seed: number, step: number, truth?: string): PreparedGroup {
  const r = rng(seed);
  const plan = [
    { answer: '12', count: 8 + (seed % 2), confidence: -0.4, path: 1 },
    { answer: '15', count: 7, confidence: -0.4, path: 2, identical: true },
    { answer: null, count: 2 },
  ];
  const rollouts: Rollout[] = synthRollouts(r, plan, { bytes: 300 }).map((x) => ({ response: x.response, meanLogprob: x.mean_logprob }));
  const g: Group = { step, questionId: `q${seed}`, rollouts };
  if (truth !== undefined) g.groundTruth = truth;
  return prepareGroup(g);
}

const core = (g: PreparedGroup, kappa: number): OperatorResult => scoreGroup(g, { operators: ['core'], params: { kappa } }).results.core!;
const truthOf = (g: PreparedGroup) => (g.groundTruth === null ? null : (l: string) => answersEqual(l, g.groundTruth!));

test('flips are changes of answer class; a label string that only looks different is no flip', () => {
  const g = contested(2, 1, '15');
  const a = core(g, 0.1);
  const b = core(g, 1);
  const d = diffGroup({ step: 1, questionId: 'q2', n: g.n }, a, b, truthOf(g));
  assert.equal(d.flipped, a.labelClass !== b.labelClass);
  assert.equal(d.flipped, true, 'κ 0.1 → 1 flips this group (checked in sensitivity tests)');
  // Same class, different spelling of the label (e.g. \dfrac vs \frac): no flip.
  const same = diffGroup({ step: 1, questionId: 'q', n: g.n }, a, { ...a, label: `${a.label} ` }, null);
  assert.equal(same.flipped, false);
  // A class change between classes with the same answer text would still be a flip.
  const other = diffGroup({ step: 1, questionId: 'q', n: g.n }, a, { ...a, labelClass: a.labelClass + 1 }, null);
  assert.equal(other.flipped, true);
});

test('sign changes of advantages and reward shifts are counted per roll-out', () => {
  const g = contested(2, 1);
  const a = core(g, 0.1);
  const b = core(g, 1);
  const d = diffGroup({ step: 1, questionId: 'q', n: g.n }, a, b, null);
  let expected = 0;
  let shift = 0;
  for (let i = 0; i < g.n; i++) {
    if (Math.sign(Math.abs(a.advantages[i]) < 1e-9 ? 0 : a.advantages[i]) !== Math.sign(Math.abs(b.advantages[i]) < 1e-9 ? 0 : b.advantages[i])) expected++;
    shift += Math.abs(a.rewards[i] - b.rewards[i]);
  }
  assert.equal(d.signChanges, expected);
  assert.ok(d.signChanges > 0, 'a flip changes advantage signs');
  assert.ok(Math.abs(d.meanAbsRewardShift - shift / g.n) < 1e-12);
  assert.equal(signOf(0), 0);
  assert.equal(signOf(-1e-12), 0);
  assert.equal(signOf(2), 1);
  // Identical settings: nothing moves.
  const same = diffGroup({ step: 1, questionId: 'q', n: g.n }, a, core(g, 0.1), null);
  assert.deepEqual([same.flipped, same.signChanges, same.meanAbsRewardShift], [false, 0, 0]);
});

test('accuracy comes only from logged ground truth: groups without it count in no accuracy', () => {
  const s = emptyComparison();
  const diffs: GroupDiff[] = [];
  const groups = [contested(2, 1, '15'), contested(4, 1), contested(3, 2, '12'), contested(8, 2)];
  for (const g of groups) {
    const a = core(g, 0.1);
    const b = core(g, 1);
    const d = diffGroup({ step: g.step, questionId: g.questionId, n: g.n }, a, b, truthOf(g));
    diffs.push(d);
    addGroup(s, d, a, b);
  }
  assert.equal(diffs[1].correctBefore, null);
  assert.equal(diffs[3].correctAfter, null);
  const steps = stepSummaries(s);
  assert.deepEqual(steps.map((x) => x.step), [1, 2]);
  assert.deepEqual(steps.map((x) => x.withTruth), [1, 1]);
  for (const st of steps) {
    const withTruth = diffs.filter((d) => d.step === st.step && d.correctBefore !== null);
    assert.equal(st.accuracyBefore, withTruth.filter((d) => d.correctBefore).length / withTruth.length);
    assert.equal(st.accuracyAfter, withTruth.filter((d) => d.correctAfter).length / withTruth.length);
  }
  assert.equal(s.flips, diffs.filter((d) => d.flipped).length);
  assert.equal(s.groups, 4);
  assert.equal(s.rewardShift.n, groups.reduce((t, g) => t + g.n, 0));
  assert.equal(s.gateShift.n, 4);
  // A run without any ground truth has no accuracy at all (null, not 0).
  const none = emptyComparison();
  const g = contested(2, 1);
  addGroup(none, diffGroup({ step: 1, questionId: 'q', n: g.n }, core(g, 0.1), core(g, 1), truthOf(g)), core(g, 0.1), core(g, 1));
  assert.deepEqual(runAccuracy(none), { before: null, after: null, withTruth: 0 });
  assert.equal(stepSummaries(none)[0].accuracyBefore, null);
  // Ground truth never reaches an operator: scoring with and without it gives the same result.
  const withGt = contested(2, 1, '15');
  const withoutGt = contested(2, 1);
  assert.deepEqual(Array.from(core(withGt, 0.1).rewards), Array.from(core(withoutGt, 0.1).rewards));
});

test('merging shards gives the same sums as one pass', () => {
  const groups = [1, 2, 3, 4, 5, 6].map((s) => contested(s, s % 2, s % 3 ? '15' : undefined));
  const one = emptyComparison();
  const shards = [emptyComparison(), emptyComparison()];
  groups.forEach((g, k) => {
    const a = core(g, 0.1);
    const b = core(g, 0.6);
    const d = diffGroup({ step: g.step, questionId: g.questionId, n: g.n }, a, b, truthOf(g));
    addGroup(one, d, a, b);
    addGroup(shards[k % 2], d, a, b);
  });
  const merged = emptyComparison();
  for (const s of shards) mergeComparison(merged, s);
  // Sums of floats in another order: equal to 1e-9.
  const rounded = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)));
  assert.deepEqual(rounded(merged), rounded(one));
  // Unavailable results are skipped, not compared.
  const skip = emptyComparison();
  const g = groups[0];
  const d = diffGroup({ step: 0, questionId: 'q', n: g.n }, undefined, core(g, 0.1), null);
  assert.ok(d.unavailable);
  addGroup(skip, d);
  assert.equal(skip.skipped, 1);
  assert.equal(skip.groups, 0);
});

test('agreement matrix: symmetric, diagonal 1, against ground truth only where logged', () => {
  const ops = ['majority', 'core', 'msttrl'] as const;
  const m = emptyAgreement([...ops]);
  const a = emptyAgreement([...ops]);
  const b = emptyAgreement([...ops]);
  const groups = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => contested(s, 0, s % 2 ? '15' : undefined));
  groups.forEach((g, k) => {
    const s = scoreGroup(g, { operators: ['majority', 'core', 'msttrl'] });
    assert.ok(!s.results.msttrl, 'MS-TTRL needs outcome checks: it did not run');
    const labels = { majority: s.results.majority!.labelClass, core: s.results.core!.labelClass };
    const truth = truthOf(g);
    const correct = truth ? { majority: truth(s.results.majority!.label!), core: truth(s.results.core!.label!) } : undefined;
    addAgreement(m, labels, correct);
    addAgreement(k % 2 ? a : b, labels, correct);
  });
  const rates = agreementRates(m);
  assert.equal(rates[0][0], 1);
  assert.equal(rates[1][1], 1);
  assert.equal(rates[0][1], rates[1][0]);
  assert.equal(rates[2][2], null, 'never ran');
  assert.equal(rates[0][2], null);
  const overturns = groups.filter((g) => {
    const s = scoreGroup(g, { operators: ['majority', 'core'] });
    return s.results.majority!.labelClass !== s.results.core!.labelClass;
  }).length;
  assert.equal(m.both[0][1], 8);
  assert.equal(m.agree[0][1], 8 - overturns);
  assert.deepEqual(m.withTruth, [4, 4, 0]);
  const merged = emptyAgreement([...ops]);
  mergeAgreement(merged, a);
  mergeAgreement(merged, b);
  assert.deepEqual(merged, m);
});

test('export: CSV quoting and formula neutralising; JSONL one line per group after a header', () => {
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "x"'), '"say ""x"""');
  assert.equal(csvField('=1+2'), "'=1+2");
  assert.equal(csvField(-3), '-3');
  assert.equal(csvField(null), '');
  assert.equal(csvField(true), 'true');
  const d: GroupDiff = { step: 1, questionId: 'q,1', n: 2, labelBefore: '\\frac{1}{2}', labelAfter: null, classBefore: 0, classAfter: -1, flipped: true, gateBefore: 0.5, gateAfter: 0.25, signChanges: 2, meanAbsRewardShift: 0.5, correctBefore: null, correctAfter: null };
  const csv = diffsToCsv([d]).trim().split('\n');
  assert.equal(csv.length, 2);
  assert.ok(csv[0].startsWith('step,question_id,n,label_before'));
  assert.equal(csv[1], '1,"q,1",2,\\frac{1}{2},,true,0.5,0.25,2,0.5,,,');
  const jl = diffsToJsonl([d], { operator: 'core' }).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(jl[0].kind, 'rescore');
  assert.equal(jl[1].question_id, 'q,1');
  assert.equal(jl[1].label_after, null);
});
