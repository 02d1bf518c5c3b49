// Sensitivity intervals: the κ and τ intervals over which a question's CoRE label stays
// the same, checked against brute-force re-scoring on a grid four times finer than the bracket's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareGroup, scoreGroup, type Group, type PreparedGroup, type Rollout } from '../../src/engine';
import { coreLabelAt, sensitivityInterval, type SensitivityInterval } from '../../src/engine/analysis/sensitivity';
import { resolveParams } from '../../src/engine/params';
import { rng, synthRollouts, type ClassPlan } from '../../scripts/synth';

function groupOf(plan: ClassPlan[], seed: number, bytes = 300): PreparedGroup {
  const r = rng(seed);
  const rollouts: Rollout[] = synthRollouts(r, plan, { bytes }).map((x) => ({ response: x.response, meanLogprob: x.mean_logprob }));
  const g: Group = { step: 0, questionId: `q${seed}`, rollouts };
  return prepareGroup(g);
}

/** Contested groups where a coherent minority fights a scattered plurality: κ moves the label. */
function contested(seed: number): PreparedGroup {
  return groupOf(
    [
      { answer: '12', count: 8 + (seed % 2), confidence: -0.4, path: 1 },
      { answer: '15', count: 7, confidence: -0.4, path: 2, identical: true },
      { answer: null, count: 2 },
    ],
    seed,
  );
}

/** Brute force: the label on a fine grid must stay the same strictly inside the interval and differ just outside. */
function checkAgainstGrid(g: PreparedGroup, s: SensitivityInterval, fine: number, tol: number, lo: number, hi: number, geometric = false): void {
  const p = resolveParams({});
  const label = (v: number) => coreLabelAt(g, p, s.param, v);
  assert.equal(label(s.value), s.labelClass);
  // Walk outwards from the value on the fine grid until the first change: it must be at the
  // bisected boundary (within tol plus one fine step), or the range end when none was found.
  for (const dir of [1, -1] as const) {
    let v = s.value;
    let firstChange: number | null = null;
    for (;;) {
      const nextV = geometric ? (dir > 0 ? v * fine : v / fine) : v + dir * fine;
      if (dir > 0 ? nextV > hi : nextV < lo) break;
      if (label(nextV) !== s.labelClass) {
        firstChange = nextV;
        break;
      }
      v = nextV;
    }
    const end = dir > 0 ? s.hi : s.lo;
    const isRangeEnd = dir > 0 ? s.hiIsRangeEnd : s.loIsRangeEnd;
    const slack = (geometric ? Math.abs(v * (fine - 1)) : fine) + tol * Math.max(1, Math.abs(end)) * 2;
    if (firstChange === null) {
      assert.ok(isRangeEnd || Math.abs(end - (dir > 0 ? hi : lo)) <= slack, `${s.param} ${dir > 0 ? 'above' : 'below'}: brute force sees no flip, bisection says ${end}`);
    } else {
      assert.ok(!isRangeEnd, `${s.param}: brute force flips at ${firstChange}, interval says no flip (${JSON.stringify(s)})`);
      assert.ok(Math.abs(firstChange - end) <= slack, `${s.param} boundary ${end} vs brute-force first change ${firstChange}`);
      // Just inside keeps the label; just beyond does not.
      assert.equal(label(end), s.labelClass, 'inside end keeps the label');
      const beyond = end + dir * tol * Math.max(1, Math.abs(end)) * 1.01;
      assert.notEqual(label(beyond), s.labelClass, `just beyond ${end} the label differs`);
    }
  }
}

test('κ interval: bracket + bisection agrees with brute-force re-scoring on a fine grid', () => {
  let finiteBoundaries = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const g = contested(seed);
    const s = sensitivityInterval(g, {}, 'kappa', { step: 0.02, tol: 1e-4 });
    assert.ok(s.lo <= s.value && s.value <= s.hi);
    assert.ok(s.affects);
    checkAgainstGrid(g, s, 0.005, 1e-4, 0, 1);
    if (!s.hiIsRangeEnd || !s.loIsRangeEnd) finiteBoundaries++;
    // The label it reports is CoRE's label as scoreGroup computes it.
    assert.equal(scoreGroup(g, { operators: ['core'] }).results.core!.labelClass, s.labelClass);
    if (!s.hiIsRangeEnd) assert.notEqual(s.aboveClass, s.labelClass);
  }
  assert.ok(finiteBoundaries >= 2, `some groups flip within κ ∈ [0, 1] (${finiteBoundaries})`);
});

test('κ interval: around a non-default value, and at the range ends', () => {
  const g = contested(2);
  for (const kappa of [0, 0.33, 0.77, 1]) {
    const s = sensitivityInterval(g, { kappa }, 'kappa', { step: 0.02 });
    assert.equal(s.value, kappa);
    assert.ok(s.lo <= kappa && kappa <= s.hi);
    checkAgainstGrid(g, s, 0.005, 1e-4, 0, 1);
  }
});

test('τ interval: geometric bracket + bisection agrees with brute force; τ without confidence does not matter', () => {
  let finite = 0;
  for (let seed = 1; seed <= 6; seed++) {
    // Confidence decides here: the minority is more confident, the plurality is scattered.
    const g = groupOf(
      [
        { answer: '12', count: 10, confidence: -0.6 - seed * 0.02, path: 1 },
        { answer: '15', count: 6 + (seed % 3), confidence: -0.3, path: 2 },
      ],
      100 + seed,
    );
    const s = sensitivityInterval(g, {}, 'tau', { factor: 1.1, tol: 1e-4, min: 0.01, max: 10 });
    assert.ok(s.affects);
    assert.ok(s.lo <= s.value && s.value <= s.hi);
    checkAgainstGrid(g, s, 1.1 ** 0.25, 1e-4, 0.01, 10, true);
    if (!s.loIsRangeEnd || !s.hiIsRangeEnd) finite++;
  }
  assert.ok(finite >= 1, 'some group flips within τ ∈ [0.01, 10]');
  const noConf = prepareGroup({ step: 0, questionId: 'nc', rollouts: [{ response: 'a \\boxed{1}' }, { response: 'a \\boxed{1}' }, { response: 'b \\boxed{2}' }] });
  const s = sensitivityInterval(noConf, {}, 'tau');
  assert.equal(s.affects, false);
  assert.equal(s.distance, Infinity);
});

test('a group with only singleton classes: κ cannot move the label', () => {
  const g = prepareGroup({ step: 0, questionId: 's', rollouts: [{ response: 'x \\boxed{1}', meanLogprob: -1 }, { response: 'y \\boxed{2}', meanLogprob: -1 }] });
  const s = sensitivityInterval(g, {}, 'kappa');
  assert.equal(s.affects, false);
  assert.equal(s.lo, 0);
  assert.equal(s.hi, 1);
});
