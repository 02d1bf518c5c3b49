// The papers' stated properties as tests (CoRE Props. 1–3, Lemma 3; the T3RL example; CISC's
// temperature), plus the tie rules and degenerate groups of docs/contract.md#operators.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareGroup, scoreGroup, scoreToJson, type Group, type Rollout, type OperatorId, type Params } from '../../src/engine';
import { rng, randomPlan, synthRollouts } from '../../scripts/synth';

/** Texts with no 4-gram in common with any other text (each from its own alphabet): cosine 0. */
function dissimilar(k: number): string {
  const base = 0x4e00 + k * 40;
  return Array.from({ length: 30 }, (_, j) => String.fromCodePoint(base + ((j * 7) % 37))).join('');
}

function group(rollouts: Rollout[], extra: Partial<Group> = {}): Group {
  return { step: 0, questionId: 'q', rollouts, ...extra };
}

function run(g: Group, ops: OperatorId[], params: Partial<Params> = {}) {
  return scoreGroup(prepareGroup(g), { operators: ops, params });
}

/** Prop. 2's uniform cliques: n* identical-text "5"s against m mutually dissimilar "7"s. */
function cliques(nStar: number, m: number, conf?: { star: number; wrong: number }): Group {
  const same = 'the one careful derivation that everyone in the minority wrote';
  const rollouts: Rollout[] = [];
  for (let i = 0; i < m; i++) rollouts.push({ response: dissimilar(i), answer: '7', meanLogprob: conf?.wrong });
  for (let i = 0; i < nStar; i++) rollouts.push({ response: same, answer: '5', meanLogprob: conf?.star });
  return group(rollouts);
}

test('Prop. 1: at κ = 1 with uniform confidence CoRE picks the plurality whenever it is unique', () => {
  const r = rng(1);
  let checked = 0;
  for (let t = 0; t < 300; t++) {
    const n = 2 + Math.floor(r() * 40);
    const rollouts = synthRollouts(r, randomPlan(r, n), { bytes: 120 }).map((ro) => ({ response: ro.response, meanLogprob: -0.3 }));
    const g = prepareGroup(group(rollouts));
    const sizes = g.classes.map((c) => c.members.length).sort((a, b) => b - a);
    if (sizes.length > 1 && sizes[0] === sizes[1]) continue;
    const s = scoreGroup(g, { operators: ['majority', 'core', 'ec'], params: { kappa: 1 } });
    assert.equal(s.results.core!.confidence, 'used');
    assert.equal(s.results.core!.label, s.results.majority!.label, `group ${t}`);
    assert.equal(s.results.ec!.label, s.results.majority!.label, `group ${t}`);
    checked++;
  }
  assert.ok(checked > 150, `only ${checked} groups with a unique plurality`);
});

test('Prop. 2: identical-text minority of 8 vs 12 dissimilar wrong roll-outs flips exactly at κ = 3/11', () => {
  const g = prepareGroup(cliques(8, 12));
  for (const kappa of [0, 0.1, 0.2, 0.25, 0.27]) {
    const s = scoreGroup(g, { operators: ['majority', 'ec', 'core'], params: { kappa, tmax: 5000 } });
    assert.equal(s.results.majority!.label, '7');
    assert.equal(s.results.core!.label, '5', `κ = ${kappa} should recover the minority`);
    assert.equal(s.results.core!.confidence, 'missing');
    assert.equal(s.analysis.overturn, true);
    assert.ok(s.analysis.margin! > 0, `margin at κ = ${kappa}`);
  }
  for (const kappa of [0.275, 0.3, 0.5, 1]) {
    const s = scoreGroup(g, { operators: ['majority', 'core'], params: { kappa, tmax: 5000 } });
    assert.equal(s.results.core!.label, '7', `κ = ${kappa} should keep the plurality`);
    assert.equal(s.analysis.overturn, false);
    assert.ok(s.analysis.margin! < 0, `margin at κ = ${kappa}`);
  }
  // The read-out's threshold is the proposition's: c* > (m−1)/(n*−1)·c_w with c_w = (1+κ)/2.
  const s = scoreGroup(g, { params: { kappa: 0.2 } });
  assert.ok(Math.abs(s.analysis.threshold! - (11 / 7) * 0.6) < 1e-12);
  assert.ok(Math.abs(s.analysis.runnerUp!.coherence! - 1) < 1e-12);
});

test('Prop. 2 on other clique sizes: the flip sits at κ = 2(n*−1)/(m−1) − 1', () => {
  for (const [nStar, m] of [
    [5, 7],
    [10, 14],
    [3, 4],
  ]) {
    const kStar = (2 * (nStar - 1)) / (m - 1) - 1;
    const g = prepareGroup(cliques(nStar, m));
    const below = scoreGroup(g, { operators: ['core'], params: { kappa: kStar - 0.02, tmax: 5000 } });
    const above = scoreGroup(g, { operators: ['core'], params: { kappa: Math.min(1, kStar + 0.02), tmax: 5000 } });
    assert.equal(below.results.core!.label, '5', `n*=${nStar}, m=${m}, κ=${kStar - 0.02}`);
    assert.equal(above.results.core!.label, '7', `n*=${nStar}, m=${m}, κ=${kStar + 0.02}`);
  }
});

test('Prop. 3: a confidence gap recovers a minority that coherence alone cannot; a reversed gap does not', () => {
  // 8 vs 16 at κ = 0.5: the vote's bar is 15/7·0.75 ≈ 1.61 > c* = 1, so EC keeps the plurality.
  const plain = run(cliques(8, 16, { star: -0.1, wrong: -0.6 }), ['majority', 'ec', 'core', 'cisc'], { kappa: 0.5 });
  assert.equal(plain.results.ec!.label, '7');
  assert.equal(plain.results.core!.label, '5');
  assert.ok(plain.analysis.margin! > 0);
  assert.ok(plain.analysis.confidenceBar! < plain.analysis.voteBar!);
  // The bar drops by exactly w̄_w/w̄_* = e^{−δ/τ} for uniform confidences within each class.
  const reversed = run(cliques(8, 16, { star: -0.6, wrong: -0.1 }), ['core'], { kappa: 0.5 });
  assert.equal(reversed.results.core!.label, '7');
  assert.ok(reversed.analysis.margin! < 0);
});

test('Prop. 3 identity: calibrated internal score c(μ̄² − ν̄/|S|) of a clique under uniform x', () => {
  const r = rng(3);
  const w = Array.from({ length: 6 }, () => 0.2 + r() * 0.8);
  const c = 0.8;
  let score = 0;
  for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) if (i !== j) score += (c * Math.sqrt(w[i] * w[j])) / 36;
  const mu = w.reduce((s, v) => s + Math.sqrt(v), 0) / 6;
  const nu = w.reduce((s, v) => s + v, 0) / 6;
  assert.ok(Math.abs(score - c * (mu * mu - nu / 6)) < 1e-12);
});

test('Lemma 3: a confident singleton never becomes the consensus when an answer clique exists', () => {
  const rollouts: Rollout[] = [
    { response: 'a lone and very sure derivation', answer: '99', meanLogprob: -0.01 },
    { response: 'shared path of reasoning one', answer: '4', meanLogprob: -0.5 },
    { response: 'shared path of reasoning two', answer: '4', meanLogprob: -0.5 },
    { response: 'shared path of reasoning three', answer: '4', meanLogprob: -0.5 },
  ];
  const s = run(group(rollouts), ['core', 'cisc']);
  assert.equal(s.results.cisc!.label, '99'); // the vote by confidence alone takes the singleton
  assert.equal(s.results.core!.label, '4');
  assert.ok(!s.results.core!.support!.includes(0));
  assert.ok(s.results.core!.mass![0] < 1e-4);
});

test('T3RL: the paper example — 11 unverified 1260 vs 5 verified 1320 → 11 vs 25 → 1320; ω = 2 keeps 1260', () => {
  const rollouts: Rollout[] = [];
  for (let i = 0; i < 11; i++) rollouts.push({ response: `carry error ${i}`, answer: '1260', verification: { valid: false } });
  for (let i = 0; i < 5; i++) rollouts.push({ response: `careful ${i}`, answer: '1320', verification: { valid: true } });
  const s = run(group(rollouts), ['majority', 't3rl']);
  assert.equal(s.results.majority!.label, '1260');
  assert.equal(s.results.t3rl!.label, '1320');
  assert.deepEqual(Array.from(s.results.t3rl!.classScores), [11, 25]);
  assert.deepEqual(Array.from(s.results.t3rl!.rewards), [...new Array(11).fill(0), ...new Array(5).fill(1)]);
  const two = run(group(rollouts), ['t3rl'], { omega: 2 });
  assert.equal(two.results.t3rl!.label, '1260');
  assert.deepEqual(Array.from(two.results.t3rl!.classScores), [11, 10]);
});

test('T3RL: tool output compared by answer equivalence; missing verification makes it unavailable', () => {
  const rollouts: Rollout[] = [
    { response: 'a', answer: '0.5', verification: { toolOutput: '0.5' } },
    { response: 'b', answer: '2', verification: { toolOutput: '3' } },
    { response: 'c', answer: '2', verification: { toolOutput: '3' } },
  ];
  const s = run(group(rollouts), ['t3rl']);
  assert.deepEqual(Array.from(s.results.t3rl!.weights!), [5, 1, 1]);
  assert.equal(s.results.t3rl!.label, '0.5');
  const missing = run(group([...rollouts, { response: 'd', answer: '2' }]), ['t3rl']);
  assert.equal(missing.results.t3rl, undefined);
  assert.match(missing.unavailable.t3rl!, /roll-out 3/);
  // No answer and no verification anywhere: unavailable, not a vacuous run with no label.
  const none = run(group([{ response: 'no answer' }, { response: 'none either' }]), ['t3rl']);
  assert.equal(none.results.t3rl, undefined);
  assert.match(none.unavailable.t3rl!, /no roll-out has a verification/);
});

test('CISC: a hot temperature is the vote, a cold one follows the most confident roll-out', () => {
  const rollouts: Rollout[] = [
    { response: 'a', answer: 'A', meanLogprob: -1 },
    { response: 'b', answer: 'A', meanLogprob: -1.1 },
    { response: 'c', answer: 'A', meanLogprob: -0.9 },
    { response: 'd', answer: 'B', meanLogprob: -0.2 },
    { response: 'e', answer: 'B', meanLogprob: -0.8 },
  ];
  assert.equal(run(group(rollouts), ['cisc'], { ciscTemp: 1000 }).results.cisc!.label, 'A');
  assert.equal(run(group(rollouts), ['cisc'], { ciscTemp: 0.01 }).results.cisc!.label, 'B');
  // The default T is τ: CISC is "CoRE without the graph".
  const byTau = run(group(rollouts), ['cisc'], { tau: 0.05 }).results.cisc!;
  const byTemp = run(group(rollouts), ['cisc'], { ciscTemp: 0.05 }).results.cisc!;
  assert.deepEqual(Array.from(byTau.weights!), Array.from(byTemp.weights!));
  // Weights are exp((c_i − max c)/T): the most confident has weight 1.
  assert.equal(byTemp.weights![3], 1);
  assert.ok(Math.abs(byTemp.weights![0] - Math.exp(-0.8 / 0.05)) < 1e-15);
});

test('tie rule: equal scores go to the class whose first member has the lowest index', () => {
  const rollouts: Rollout[] = ['b', 'a', 'a', 'b'].map((answer) => ({ response: `same words ${answer}`, answer, meanLogprob: -0.5 }));
  const s = run(group(rollouts), ['majority', 'cisc', 'ec', 'core']);
  for (const op of ['majority', 'cisc', 'ec', 'core'] as const) assert.equal(s.results[op]!.label, 'b', op);
});

test('a group of one', () => {
  const s = run(group([{ response: 'so \\boxed{3}', meanLogprob: -0.2 }]), ['majority', 'cisc', 'ec', 'core']);
  assert.equal(s.n, 1);
  assert.equal(s.results.majority!.label, '3');
  assert.deepEqual(Array.from(s.results.majority!.advantages), [0]);
  const core = s.results.core!;
  assert.deepEqual(Array.from(core.rewards), [0]);
  assert.equal(core.gate, 0);
  assert.deepEqual(Array.from(core.mass!), [1]);
  assert.ok(!JSON.stringify(scoreToJson(s)).includes('NaN'));
});

test('all answers distinct: CoRE gate 0 and rewards 0', () => {
  const rollouts: Rollout[] = ['1', '2', '3', '4', '5'].map((a) => ({ response: `text ${a} \\boxed{${a}}`, meanLogprob: -Number(a) / 10 }));
  const s = run(group(rollouts), ['majority', 'core']);
  assert.equal(s.results.core!.gate, 0);
  assert.deepEqual(Array.from(s.results.core!.rewards), [0, 0, 0, 0, 0]);
  assert.equal(s.results.majority!.label, '1');
  assert.equal(s.analysis.regime, 'competence-floor');
});

test('no answers at all: null labels, zero rewards, no NaN anywhere', () => {
  const rollouts: Rollout[] = [0, 1, 2].map((i) => ({ response: `truncated \\boxed{${i}`, meanLogprob: -0.1 * i }));
  const s = run(group(rollouts), ['majority', 'cisc', 'ec', 'core']);
  for (const op of ['majority', 'cisc', 'ec', 'core'] as const) {
    assert.equal(s.results[op]!.label, null, op);
    assert.deepEqual(Array.from(s.results[op]!.rewards), [0, 0, 0], op);
  }
  const json = JSON.stringify(scoreToJson(s));
  assert.ok(!json.includes('NaN') && !json.includes('Infinity'));
});

test('without confidence: core runs as ec and says so; cisc is unavailable', () => {
  const r = rng(9);
  const rollouts = synthRollouts(r, randomPlan(r, 20), { withConfidence: false }).map((ro) => ({ response: ro.response }));
  const s = run(group(rollouts), ['cisc', 'ec', 'core']);
  assert.equal(s.results.core!.confidence, 'missing');
  assert.deepEqual(Array.from(s.results.core!.rewards), Array.from(s.results.ec!.rewards));
  assert.equal(s.results.core!.label, s.results.ec!.label);
  assert.equal(s.results.cisc, undefined);
  assert.match(s.unavailable.cisc!, /20 of 20/);
  assert.equal(scoreToJson(s).results && (scoreToJson(s).results as Record<string, { confidence?: string }>).core.confidence, 'missing');
});

test('the empty box is its own (degenerate) class and can win the vote', () => {
  const rollouts: Rollout[] = [
    { response: '\\boxed{}' },
    { response: '\\boxed{}' },
    { response: '\\boxed{}' },
    { response: 'so \\boxed{4}' },
    { response: 'hence \\boxed{4}' },
  ];
  const s = run(group(rollouts), ['majority']);
  assert.equal(s.results.majority!.label, '');
});

test('prepared without reasoning vectors: votes run, EC/CoRE refuse instead of guessing', () => {
  const g = prepareGroup(group([{ response: 'a \\boxed{1}' }, { response: 'b \\boxed{1}' }, { response: 'c \\boxed{2}' }]), { reasoning: false });
  assert.equal(scoreGroup(g, { operators: ['majority'] }).results.majority!.label, '1');
  assert.throws(() => scoreGroup(g, { operators: ['core'] }), /reasoning/);
});
