// Consensus against confidence in the views: the consensus panel marks the roll-outs whose
// advantages under the two picked operators have opposite signs (a zero pushes neither way), picks
// a pair that ran, and the dashboard's family rows — learning-signal share per operator and per
// step, consensus–confidence label agreement — count only the groups each operator ran on; the
// panel's note says when a value is an approximation; a run-wide what-if takes a confidence reward
// against the vote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RunStore } from '../../src/extension/model/run-store';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { oppositeSigns, pickPair, signDisagreements } from '../../webview/consensus/sign-agreement';
import { dashboardModel } from '../../src/extension/dashboard/dashboard-model';
import { emptyAgreement, OPERATOR_IDS, type GroupHealth, type OperatorId, type RunHealth } from '../../src/engine';
import type { DashboardData } from '../../src/extension/workers/whatif-engine';
import type { OperatorOutcome, QuestionView, RolloutRow } from '../../src/protocol/messages';
import type { Group } from '../../src/engine';
import { buildView, storeGroup } from '../../src/extension/model/scoring';
import { defaultParams } from '../../src/extension/slider-params';

test('opposite signs: only two non-zero, finite advantages of opposite sign', () => {
  assert.equal(oppositeSigns(0.5, -0.2), true);
  assert.equal(oppositeSigns(-1, 1e-3), true);
  assert.equal(oppositeSigns(0.5, 0.2), false);
  assert.equal(oppositeSigns(-0.5, -0.2), false);
  assert.equal(oppositeSigns(0, -0.2), false);
  assert.equal(oppositeSigns(1e-13, -0.2), false);
  assert.equal(oppositeSigns(0.5, undefined), false);
  assert.equal(oppositeSigns(null, -1), false);
  assert.equal(oppositeSigns(Number.NaN, -1), false);
  assert.equal(oppositeSigns(Number.POSITIVE_INFINITY, -1), false);
});

function row(index: number, advantages: Partial<Record<OperatorId, number>>): RolloutRow {
  return { index, sampleIdx: index, answer: String(index), classIndex: 0, confidence: null, weight: null, mass: null, inSupport: false, rewards: {}, advantages, loggedReward: null, mismatch: false, preview: '', hasSource: false };
}

function outcome(operator: OperatorId, available: boolean): OperatorOutcome {
  return { operator, available, label: available ? '1' : null, gate: 1, labelClass: available ? 0 : -1, flipsMajority: false, correct: null };
}

test('sign disagreements: the roll-outs the two operators push apart, in row order', () => {
  const rows = [row(0, { majority: 0.8, likelihood: -0.3 }), row(1, { majority: 0.8, likelihood: 0.3 }), row(2, { majority: -1.2, likelihood: 0.9 }), row(3, { majority: 0, likelihood: 0.9 }), row(4, { majority: -1.2 })];
  assert.deepEqual(signDisagreements(rows, 'majority', 'likelihood'), [0, 2]);
  assert.deepEqual(signDisagreements(rows, 'likelihood', 'majority'), [0, 2]);
  assert.deepEqual(signDisagreements(rows, 'majority', 'entropy'), []);
});

test('the pair shown: the pick where it ran, else the configured consensus operator, else the first that ran', () => {
  const view = (ops: [OperatorId, boolean][], configured: OperatorId) => ({ operators: ops.map(([o, a]) => outcome(o, a)), configuredOperator: configured }) as unknown as QuestionView;
  const v = view(
    [
      ['majority', true],
      ['core', true],
      ['selfcertainty', false],
      ['entropy', true],
      ['likelihood', true],
    ],
    'core',
  );
  assert.deepEqual(pickPair(v, {}), { consensus: 'core', confidence: 'entropy' });
  assert.deepEqual(pickPair(v, { consensus: 'majority', confidence: 'likelihood' }), { consensus: 'majority', confidence: 'likelihood' });
  // A pick that did not run on this question falls back.
  assert.deepEqual(pickPair(v, { confidence: 'selfcertainty' }), { consensus: 'core', confidence: 'entropy' });
  // The run configured with a confidence reward: it is the confidence side; the vote the consensus side.
  assert.deepEqual(pickPair(view([['majority', true], ['likelihood', true]], 'likelihood'), {}), { consensus: 'majority', confidence: 'likelihood' });
  assert.deepEqual(pickPair(view([['majority', true], ['selfcertainty', false]], 'majority'), {}), { consensus: 'majority', confidence: undefined });
});

test('family rows: per step, each operator’s share of groups with signal and the label agreement of consensus and confidence', () => {
  const health = (step: number, q: string, ops: Partial<Record<OperatorId, number>>): GroupHealth =>
    ({ step, questionId: q, n: 4, operators: Object.fromEntries(Object.entries(ops).map(([o, signal]) => [o, { label: '1', labelClass: 0, correct: null, rewardAccuracy: null, gate: 1, signal }])) }) as unknown as GroupHealth;
  const base = { n: 4, regime: 'contested', majorityRatio: 0.5, gate: 1, mismatches: 0 };
  const data: DashboardData = {
    runId: 'r',
    cancelled: false,
    failed: [],
    ms: 1,
    agreement: emptyAgreement(OPERATOR_IDS),
    rows: [
      // step 1: majority teaches on both, likelihood on one; they pick the same class on q1 only.
      { ...base, key: 'a', step: 1, questionId: 'q1', labels: { majority: 0, likelihood: 0, core: 1 }, health: health(1, 'q1', { majority: 4, likelihood: 0, core: 2 }) },
      { ...base, key: 'b', step: 1, questionId: 'q2', labels: { majority: 1, likelihood: 0, core: 1 }, health: health(1, 'q2', { majority: 2, likelihood: 3, core: 0 }) },
      // step 2: likelihood did not run on q3 (no confidence logged): it is not in its denominator.
      { ...base, key: 'c', step: 2, questionId: 'q3', labels: { majority: 0 }, health: health(2, 'q3', { majority: 0 }) },
      { ...base, key: 'd', step: 2, questionId: 'q4', labels: { majority: 2, likelihood: 2 }, health: health(2, 'q4', { majority: 1, likelihood: 1 }) },
    ],
  };
  const m = dashboardModel(data, { steps: [] } as unknown as RunHealth);
  const [s1, s2] = m.steps;
  assert.deepEqual(s1.signal, { majority: 1, likelihood: 0.5, core: 0.5 });
  assert.deepEqual(s2.signal, { majority: 0.5, likelihood: 1 });
  assert.deepEqual(s1.familyAgreement, { majority: { likelihood: 0.5 }, core: { likelihood: 0 } });
  assert.deepEqual(s2.familyAgreement, { majority: { likelihood: 1 } });
  // Two consensus operators are not a family pair.
  assert.equal((s1.familyAgreement.majority as Record<string, number>).core, undefined);
});

test('the panel says when a confidence reward is an approximation (RENT’s entropy from sampled-token log-probs)', () => {
  const g: Group = {
    step: 1,
    questionId: 'approx',
    rollouts: [0, 1, 2, 3].map((i) => ({ response: `so \\boxed{${i % 2}}`, meanLogprob: -0.2 - 0.1 * i })),
  };
  const v = buildView(storeGroup(g, 'r', 'r'), defaultParams(), 'majority');
  const entropy = v.operators.find((o) => o.operator === 'entropy')!;
  assert.equal(entropy.available, true);
  assert.match(entropy.note ?? '', /^approximation: /);
  // The vote is no approximation: no note.
  assert.equal(v.operators.find((o) => o.operator === 'majority')!.note, undefined);
});

test('what-if across families: a run re-scored with a confidence reward against the vote (the e2e fixture)', async () => {
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  const engine = new WhatIfEngine({ workers: 0 });
  try {
    const run = store.add(join(import.meta.dirname, '../e2e/fixtures/family-run'), 'opened');
    await store.idle();
    const r = await engine.rescore(storeSource(store, run), { operator: 'majority', params: defaultParams() }, { operator: 'likelihood', params: defaultParams() });
    assert.equal(r.operator, 'likelihood');
    assert.equal(r.groups, 6);
    // fixtures/family-run: on fam/1 the vote is right and the model surest of the wrong minority
    // (both steps); elsewhere the two agree, also on step 1's wrong, confident vote of fam/3.
    assert.deepEqual(r.flips.map((f) => [f.step, f.questionId, f.before, f.after]).sort(), [
      [0, 'fam/1', '56', '54'],
      [1, 'fam/1', '56', '54'],
    ]);
    assert.equal(r.accuracyBefore, 5 / 6);
    assert.equal(r.accuracyAfter, 3 / 6);
  } finally {
    store.dispose();
    await engine.dispose();
  }
});
