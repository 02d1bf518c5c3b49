// The learning signal left (docs/health.md §6): per-group signal counts, per-step shares under
// every operator, the saturated share, CoRE against the vote, and the collapse alarm; figures
// computed by hand from the groups below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunContext, prepareGroup, scoreGroup, type Group } from '../../src/engine';
import { analyseRun, groupHealth, labelFreeCopies, isSaturated, signalRollouts, type GroupHealth } from '../../src/engine/analysis/run-health';
import { healthOf } from '../../src/cli/health';
import { makeRun } from './health-runs';

/** A group whose roll-outs answer `answers` (null: no box), each with its own reasoning text. */
function group(step: number, q: string, answers: (string | null)[], truth?: string, texts?: string[]): Group {
  return {
    step,
    questionId: q,
    groundTruth: truth ?? null,
    rollouts: answers.map((a, i) => ({ response: texts?.[i] ?? `Attempt ${q}: ${'abcdefghij'.slice(0, 3 + i)} so ${a === null ? 'I give up.' : `\\boxed{${a}}`}`, meanLogprob: -0.3 - 0.05 * i })),
  };
}

function health(groups: Group[], configuredOperator?: 'majority' | 'core'): GroupHealth[] {
  const ctx = createRunContext();
  return groups.map((g) => healthOf(g, { params: {}, configuredOperator }, ctx));
}

test('per group: roll-outs with a non-zero advantage, saturation, label and reward accuracy per operator', () => {
  const [g1, g2, g3, g4] = health([
    group(0, 'a', ['3', '3', '3', '5'], '3'),
    group(0, 'b', ['7', '7', '7', '7'], '7'),
    group(0, 'c', [null, null, null, null], '1'),
    group(0, 'd', ['1', '2', '1', '2'], '2'),
  ]);
  // Vote rewards [1,1,1,0]: mean 0.75, every advantage non-zero.
  assert.equal(g1.operators!.majority!.signal, 4);
  assert.equal(g1.operators!.majority!.correct, true);
  assert.equal(g1.operators!.majority!.rewardAccuracy, 1);
  // Unanimous: rewards [1,1,1,1], no signal under the vote; saturated.
  assert.equal(g2.operators!.majority!.signal, 0);
  assert.equal(isSaturated(g2), true);
  assert.equal(isSaturated(g1), false);
  // No answer at all: every reward 0, no signal, not saturated (nothing was agreed on).
  assert.equal(g3.operators!.majority!.signal, 0);
  assert.equal(g3.operators!.majority!.label, null);
  assert.equal(g3.operators!.majority!.correct, false);
  assert.equal(isSaturated(g3), false);
  // A 2–2 tie goes to the first class ("1"), the truth is "2": wrong label, and every roll-out's
  // pseudo-reward disagrees with its true reward.
  assert.equal(g4.operators!.majority!.label, '1');
  assert.equal(g4.operators!.majority!.correct, false);
  assert.equal(g4.operators!.majority!.rewardAccuracy, 0);
  assert.equal(g4.operators!.majority!.signal, 4);
  // The same read-outs as health's own vote figures.
  assert.equal(g1.truth!.rewardAccuracy, g1.operators!.majority!.rewardAccuracy);
});

test('signalRollouts counts A_i · w_q, so a zero gate silences a group', () => {
  const g = prepareGroup(group(0, 'a', ['3', '3', '5', '5']), { reasoning: true });
  const r = scoreGroup(g, { operators: ['core'] }).results.core!;
  assert.ok(r.advantages.some((a) => Math.abs(a) > 1e-6));
  assert.equal(signalRollouts(r), r.advantages.filter((a) => Math.abs(a) > 1e-9).length);
  assert.equal(signalRollouts({ ...r, lossWeight: 0 }), 0);
});

test('per step: shares of groups and roll-outs with signal, the saturated share, CoRE against the vote', () => {
  // Step 0: groups a, b, c, d as above. Step 1: two groups, one unanimous with identical texts
  // and confidences (every operator's rewards equal: no signal anywhere), one 3–1.
  const same = Array(4).fill('All the same reasoning, word for word, so \\boxed{9}');
  const recs = health([
    group(0, 'a', ['3', '3', '3', '5'], '3'),
    group(0, 'b', ['7', '7', '7', '7'], '7'),
    group(0, 'c', [null, null, null, null], '1'),
    group(0, 'd', ['1', '2', '1', '2'], '2'),
    { ...group(1, 'a', ['9', '9', '9', '9'], '9', same), rollouts: same.map((response) => ({ response, meanLogprob: -0.3 })) },
    group(1, 'b', ['4', '4', '6', '4'], '6'),
  ]);
  const h = analyseRun(recs, { permutations: 99 });
  const ls = h.learningSignal!;
  assert.equal(ls.configured, 'majority');
  // Every operator that ran on the run's groups, as in the dashboard's health records: token entropy
  // from the logged log-probs (an approximation, said so), no self-certainty (no logits logged), no
  // T3RL (no verification logged).
  assert.deepEqual(ls.operators, ['majority', 'cisc', 'ec', 'core', 'empo', 'entropy', 'likelihood', 'novelty']);
  // Vote: step 0 a and d teach (2 of 4 groups, 8 of 16 roll-outs); step 1 only b (1 of 2, 4 of 8).
  assert.deepEqual(ls.groups.majority, [0.5, 0.5]);
  assert.deepEqual(ls.rollouts.majority, [0.5, 0.5]);
  assert.deepEqual(ls.total.majority, { groups: 3 / 6, rollouts: 12 / 24 });
  // Saturated: b at step 0 (1 of 4), a at step 1 (1 of 2).
  assert.deepEqual(ls.saturated, [0.25, 0.5]);
  // The alarm-tested series is the configured operator's share of groups.
  assert.deepEqual(h.series.find((s) => s.id === 'signal_groups')!.values, [0.5, 0.5]);
  // CoRE: step 0 b (unanimous, distinct texts) keeps graded rewards; step 1 a (identical texts) does not.
  const core = recs.map((r) => r.operators!.core!.signal);
  assert.ok(core[1] > 0, 'CoRE teaches in a unanimous group whose reasoning differs');
  assert.equal(core[4], 0, 'identical texts: equal rewards under CoRE too');
  assert.equal(core[2], 0, 'no answers: no graph');
  assert.deepEqual(ls.saturatedCoreSignal, [1, 0]);
  const coreGroups = [core.slice(0, 4).filter((k) => k > 0).length / 4, core.slice(4).filter((k) => k > 0).length / 2];
  assert.deepEqual(ls.groups.core, coreGroups);
  assert.deepEqual(ls.coreVsVote, [coreGroups[0] - 0.5, coreGroups[1] - 0.5]);
});

test('the configured operator decides the alarm-tested series', () => {
  const recs = health([group(0, 'b', ['7', '7', '7', '7'], '7'), group(0, 'a', ['3', '3', '3', '5'], '3')], 'core');
  const h = analyseRun(recs, { configuredOperator: 'core', permutations: 99 });
  assert.equal(h.learningSignal!.configured, 'core');
  assert.deepEqual(h.series.find((s) => s.id === 'signal_groups')!.values, [1]);
  assert.deepEqual(analyseRun(recs, { permutations: 99 }).series.find((s) => s.id === 'signal_groups')!.values, [0.5]);
});

test('pseudo-label truth dropped: the operators\u2019 accuracy read-outs go with it, the originals stay', () => {
  // a verl `gts` with nothing saying where it comes from (docs/contract.md#ground-truth)
  const recs = health(Array.from({ length: 10 }, (_, i) => ({ ...group(0, `q${i}`, ['3', '3', '5', '5', '3'], '3'), truthMayBeVote: true })));
  const copies = labelFreeCopies(recs);
  assert.notEqual(copies, recs);
  // a native ground_truth equal to the vote is kept; so is a suspected one under `use`
  const native = health(Array.from({ length: 10 }, (_, i) => group(0, `q${i}`, ['3', '3', '5', '5', '3'], '3')));
  assert.equal(labelFreeCopies(native), native);
  assert.equal(labelFreeCopies(recs, 'use'), recs);
  assert.equal(copies[0].operators!.majority!.correct, null);
  assert.equal(copies[0].operators!.majority!.rewardAccuracy, null);
  assert.equal(recs[0].operators!.majority!.correct, true);
});

test('a saturating run: "groups with signal 1.00 → 0.00 from step ≈ 12", and CoRE keeps its signal', () => {
  const at = 12;
  const ctx = createRunContext();
  const recs = makeRun({ steps: 24, questions: 6, n: 8, accuracy: 0.5, seed: 11 }, { entropyCollapseAt: at }).map((g) => healthOf(g, { params: {} }, ctx));
  const h = analyseRun(recs);
  const alarm = h.alarms.find((a) => a.series === 'signal_groups');
  assert.ok(alarm, JSON.stringify(h.alarms));
  assert.equal(alarm.step, at);
  assert.equal(alarm.message, `groups with signal ${alarm.before.toFixed(2)} → 0.00 from step ≈ ${at}`);
  assert.ok(alarm.before > 0.9);
  const ls = h.learningSignal!;
  for (let k = at; k < 24; k++) {
    assert.equal(ls.saturated[k], 1);
    assert.equal(ls.groups.majority![k], 0);
    assert.equal(ls.saturatedCoreSignal![k], 1, 'distinct reasoning texts: CoRE\u2019s rewards stay graded');
    assert.equal(ls.coreVsVote![k], 1);
  }
});

test('groupHealth without ground truth: no accuracy read-outs, the signal all the same', () => {
  const g = prepareGroup(group(0, 'a', ['3', '3', '3', '5']), { reasoning: true, health: true });
  const h = groupHealth(g, scoreGroup(g, { operators: ['majority'] }));
  assert.deepEqual(h.operators!.majority, { label: '3', labelClass: 0, correct: null, rewardAccuracy: null, gate: 1, signal: 4 });
});
