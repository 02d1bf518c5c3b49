import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunContext, grpoAdvantages, prepareGroup, rewardMismatches, scoreGroup, type Group, type Rollout } from '../../src/engine';

test('GRPO advantages: unbiased std, eps, Dr. GRPO scale, a group of one', () => {
  const a = grpoAdvantages([1, 0, 0, 1]);
  const std = Math.sqrt(((0.5 ** 2) * 4) / 3);
  assert.ok(Math.abs(a[0] - 0.5 / (std + 1e-6)) < 1e-15);
  assert.ok(Math.abs(grpoAdvantages([1, 0], 1e-4)[0] - 0.5 / (Math.SQRT1_2 + 1e-4)) < 1e-15);
  assert.deepEqual(Array.from(grpoAdvantages([1, 0, 0, 1], 1e-6, 'none')), [0.5, -0.5, -0.5, 0.5]);
  assert.deepEqual(Array.from(grpoAdvantages([0.7])), [0]);
  assert.deepEqual(Array.from(grpoAdvantages([1, 1, 1])), [0, 0, 0]);
});

test('reward mismatch: |Δ| > 1e-6 against the configured operator', () => {
  assert.deepEqual(rewardMismatches([1, 0, null, 0.5], [1, 1, 0, 0.5000001]).indices, [1]);
  const rollouts: Rollout[] = ['3', '3', '4'].map((a, i) => ({ response: `t${i}`, answer: a, reward: i === 2 ? 1 : 1 }));
  const s = scoreGroup(prepareGroup({ step: 0, questionId: 'q', rollouts }), { operators: ['core'], configuredOperator: 'majority' });
  assert.equal(s.rewardMismatch!.operator, 'majority');
  assert.deepEqual(s.rewardMismatch!.indices, [2]);
  // named nowhere: no check against an assumed operator; the operators whose rewards equal the logged ones instead
  const unnamed = scoreGroup(prepareGroup({ step: 0, questionId: 'q', rollouts }), { operators: ['majority', 'core'] });
  assert.equal(unnamed.rewardMismatch, undefined);
  assert.deepEqual(unnamed.rewardMatches, []);
  const logged = scoreGroup(prepareGroup({ step: 0, questionId: 'q', rollouts, loggedOperator: 'majority' }), { operators: ['core'] });
  assert.equal(logged.rewardMismatch!.operator, 'majority');
});

function ms(step: number, answers: string[], checks: Group['outcomeChecks']): Group {
  return { step, questionId: 'q', rollouts: answers.map((a, i) => ({ response: `r${i}`, answer: a })), outcomeChecks: checks };
}

test('MS-TTRL: three states, gated inverse-probability scaling, label by pass rate', () => {
  const g = ms(0, ['1', '1', '1', '2', '3', '3'], [
    { answer: '1', passed: 8, trials: 8 },
    { answer: '2', passed: 7, trials: 8 },
    { answer: '3', passed: 5, trials: 8 },
  ]);
  const r = scoreGroup(prepareGroup(g), { operators: ['msttrl'] }).results.msttrl!;
  const ips = (f: number) => (1 / f) ** (1 - 0.9);
  assert.deepEqual(r.outcomes!.map((o) => o.state), ['correct', 'correct', 'candidate']);
  assert.deepEqual(Array.from(r.rewards), [ips(3 / 6), ips(3 / 6), ips(3 / 6), ips(1 / 6), 0.625, 0.625]);
  assert.equal(r.label, '1'); // pass rate 1 beats 7/8
  // λ = 1: no scaling; λ = 0: full inverse-probability scaling.
  assert.equal(scoreGroup(prepareGroup(g), { operators: ['msttrl'], params: { lambda: 1 } }).results.msttrl!.rewards[3], 1);
  assert.equal(scoreGroup(prepareGroup(g), { operators: ['msttrl'], params: { lambda: 0 } }).results.msttrl!.rewards[3], 6);
});

test('MS-TTRL cache: resolved states are kept across steps, candidates take their latest pass rate', () => {
  const ctx = createRunContext();
  const s0 = ms(0, ['1', '2', '3'], [
    { answer: '1', passed: 1, trials: 8 }, // Wrong
    { answer: '2', passed: 5, trials: 8 }, // Candidate
  ]);
  const s1 = ms(1, ['1', '2', '3', '3'], [
    { answer: '1', passed: 8, trials: 8 }, // ignored: already Wrong
    { answer: '2', passed: 6, trials: 8 }, // 0.75: now Correct
  ]);
  const r0 = scoreGroup(prepareGroup(s0), { operators: ['msttrl'] }, ctx).results.msttrl!;
  assert.deepEqual(r0.outcomes!.map((o) => o.state), ['wrong', 'candidate', 'candidate']);
  assert.deepEqual(Array.from(r0.rewards), [0, 0.625, 0.5]); // "3" unchecked: p = 0.5
  assert.equal(r0.label, null);
  const r1 = scoreGroup(prepareGroup(s1), { operators: ['msttrl'] }, ctx).results.msttrl!;
  assert.deepEqual(r1.outcomes!.map((o) => o.state), ['wrong', 'correct', 'candidate']);
  assert.equal(r1.label, '2');
  // A later group without checks still uses the cache.
  const s2 = ms(2, ['2', '1'], []);
  const r2 = scoreGroup(prepareGroup(s2), { operators: ['msttrl'] }, ctx);
  assert.equal(r2.results.msttrl!.label, '2');
  // Without a cache and without checks the operator says why it cannot run.
  assert.match(scoreGroup(prepareGroup(s2), { operators: ['msttrl'] }).unavailable.msttrl!, /outcome_checks/);
});

test('MS-TTRL label ties: equal pass rate goes to the larger class, then the lowest first member', () => {
  const g = ms(0, ['1', '2', '2', '3', '3'], [
    { answer: '1', passed: 8, trials: 8 },
    { answer: '2', passed: 8, trials: 8 },
    { answer: '3', passed: 8, trials: 8 },
  ]);
  assert.equal(scoreGroup(prepareGroup(g), { operators: ['msttrl'] }).results.msttrl!.label, '2');
});

test('reward mismatch against a logged MS-TTRL that was not scored: checked with the run\u2019s outcome cache, not a fresh one', () => {
  const steps = [
    ms(0, ['1', '2', '3'], [
      { answer: '1', passed: 1, trials: 8 }, // Wrong, for good
      { answer: '2', passed: 5, trials: 8 },
    ]),
    ms(1, ['1', '2', '3', '3'], [
      { answer: '1', passed: 8, trials: 8 }, // ignored: already Wrong
      { answer: '2', passed: 6, trials: 8 },
    ]),
  ];
  // the rewards the training loop logged: MS-TTRL over the run in order
  const loop = createRunContext();
  const logged = steps.map((g) => Array.from(scoreGroup(prepareGroup(g), { operators: ['msttrl'] }, loop).results.msttrl!.rewards));
  assert.equal(logged[1][0], 0, 'the roll-out of a Wrong answer earns nothing');
  const ctx = createRunContext();
  for (const [i, g] of steps.entries()) {
    const rollouts = g.rollouts.map((r, j) => ({ ...r, reward: logged[i][j] }));
    const s = scoreGroup(prepareGroup({ ...g, rollouts, loggedOperator: 'msttrl' }), { operators: ['majority', 'core'] }, ctx);
    assert.equal(s.rewardMismatch!.operator, 'msttrl');
    assert.deepEqual(s.rewardMismatch!.indices, [], `step ${i}: the logged rewards are MS-TTRL's`);
  }
});
