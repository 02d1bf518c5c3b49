// Run health (docs/health.md): the text measures, the flags, the change-point test's false-alarm
// rate, and every injected fault of a generated run found where it was injected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunContext, prepareGroup, scoreGroup, type Group } from '../../src/engine';
import {
  analyseRun,
  answerRule,
  changePoints,
  FLAG,
  repetitionShare,
  REPETITION_THRESHOLD,
  rolloutFlags,
  subsampleGroup,
  type GroupHealth,
  type RunHealth,
} from '../../src/engine/analysis/run-health';
import { healthOf } from '../../src/cli/health';
import { reasoning, rng } from '../../scripts/synth';
import { makeRun, type RunFaults } from './health-runs';

const SHAPE = { steps: 24, questions: 6, n: 8, accuracy: 0.5, seed: 11 };
/** Steps after a change by which it is alarmed: a perfect shift seen for k steps of T has the
 * permutation p-value 2/C(T, k), below the Bonferroni level from k = 4 on a 16-step prefix. */
const DETECTION_STEPS = 4;

function records(groups: Group[], whatif = false): GroupHealth[] {
  const ctx = createRunContext();
  return groups.map((g, i) => healthOf(g, { params: {}, whatif: whatif && i % 3 === 0 }, ctx));
}

function runHealth(faults: RunFaults, shape = SHAPE): { recs: GroupHealth[]; h: RunHealth } {
  const recs = records(makeRun(shape, faults));
  return { recs, h: analyseRun(recs) };
}

/** The first prefix of the run (steps ≤ last) on which `series` alarms within ±1 step of `at`. */
function detectionDelay(recs: GroupHealth[], series: string, at: number, steps: number): number | null {
  for (let last = at; last < steps; last++) {
    const h = analyseRun(recs.filter((r) => r.step <= last));
    if (h.alarms.some((a) => a.series === series && Math.abs(a.step - at) <= 1)) return last - at + 1;
  }
  return null;
}

test('repetition share: sound derivations stay far below the threshold, loops above it', () => {
  const r = rng(3);
  for (let i = 0; i < 200; i++) assert.ok(repetitionShare(reasoning(r, 1500, i % 5, i % 2 === 0)) < 0.25);
  const loop = 'Let me compute the sum again. The sum is 12 + 15 = 27. Wait, ';
  assert.ok(repetitionShare('We begin. ' + loop.repeat(5)) >= REPETITION_THRESHOLD);
  assert.ok(repetitionShare(loop.repeat(20)) > 0.9);
  assert.equal(repetitionShare('short ' + loop), 0);
});

test('answer rule: box, stated, last number, none, and a box left open', () => {
  assert.deepEqual(answerRule('so \\boxed{3}', '3', false), { rule: 'box', truncated: false });
  assert.deepEqual(answerRule('The answer is 3.', '3', false), { rule: 'stated', truncated: false });
  assert.deepEqual(answerRule('we get 3 apples', '3', false), { rule: 'last-number', truncated: false });
  assert.deepEqual(answerRule('so \\boxed{\\frac{1}{', null, false), { rule: 'none', truncated: true });
  assert.deepEqual(answerRule('whatever', '7', true), { rule: 'logged', truncated: false });
});

test('flags: empty box, no answer, truncated, unformatted, near-duplicate, repetitive', () => {
  const body = reasoning(rng(5), 400, 0);
  const loop = 'Wait, let me check this again. '.repeat(12);
  const g = prepareGroup(
    {
      step: 0,
      questionId: 'q',
      rollouts: [
        { response: `${body} \\boxed{4}` },
        { response: `${body} \\boxed{4}` },
        { response: 'no digits here' },
        { response: `${loop}\\boxed{}` },
        { response: 'we stop inside \\boxed{1' },
        { response: `${reasoning(rng(6), 300, 1)} The answer is 9.` },
      ],
    },
    { health: true },
  );
  const f = rolloutFlags(g);
  assert.ok(f[0] & FLAG.nearDuplicate && f[1] & FLAG.nearDuplicate);
  assert.equal(f[0] & (FLAG.unformatted | FLAG.empty | FLAG.noAnswer), 0);
  assert.ok(f[2] & FLAG.noAnswer);
  assert.ok(f[3] & FLAG.empty && f[3] & FLAG.repetitive);
  assert.ok(f[4] & FLAG.truncated && f[4] & FLAG.noAnswer);
  assert.ok(f[5] & FLAG.unformatted);
  // Without texts only what the answers say is known.
  const bare = rolloutFlags(prepareGroup({ step: 0, questionId: 'q', rollouts: [{ response: 'x \\boxed{}' }] }));
  assert.equal(bare[0], FLAG.empty);
});

test('change points: the false-alarm rate on stationary series is at most α; a shift is found at its step', () => {
  const r = rng(17);
  const alpha = 0.05;
  let alarms = 0;
  const trials = 300;
  for (let t = 0; t < trials; t++) {
    const xs = Array.from({ length: 30 }, () => r() + r() + r());
    if (changePoints(xs, { alpha, minChange: 0, permutations: 199, seed: t }).length) alarms++;
  }
  // Exact level α under exchangeability: 15 expected; 25 is more than 2.5 binomial standard deviations above.
  assert.ok(alarms <= 25, `${alarms} false alarms in ${trials}`);
  const shifted = Array.from({ length: 30 }, (_, i) => (i >= 18 ? 1 : 0) + 0.2 * r());
  const cps = changePoints(shifted, { alpha: 0.01, minChange: 0.1 });
  assert.equal(cps.length, 1);
  assert.equal(cps[0].index, 18);
  assert.ok(cps[0].after - cps[0].before > 0.8);
});

test('a stationary run raises no alarm and no reward bug (three seeds)', () => {
  for (const seed of [1, 2, 3]) {
    const { h } = runHealth({}, { ...SHAPE, seed });
    assert.deepEqual(h.alarms.map((a) => a.message), [], `seed ${seed}`);
    assert.deepEqual(h.rewardBugs, [], `seed ${seed}`);
    assert.equal(h.premise.label.verdict, 'informative');
    assert.equal(h.degenerate.pluralities, 0);
  }
});

test('format collapse: the unformatted share alarms at the injected step within 4 steps, and the constant penalty is named', () => {
  const at = 12;
  const { recs, h } = runHealth({ formatCollapseAt: at });
  const alarm = h.alarms.find((a) => a.series === 'unformatted_share');
  assert.ok(alarm, JSON.stringify(h.alarms));
  assert.equal(alarm.step, at);
  assert.ok(alarm.before < 0.05 && alarm.after > 0.95);
  assert.match(alarm.message, /^unformatted share 0\.00 → 1\.00 from step ≈ 12$/);
  const bug = h.rewardBugs[0];
  assert.equal(bug.kind, 'constant-penalty');
  assert.equal(bug.firstStep, at);
  assert.equal(bug.groups, (SHAPE.steps - at) * SHAPE.questions);
  assert.equal(bug.example.step, at);
  assert.match(bug.message, /extractable answer/);
  const delay = detectionDelay(recs, 'unformatted_share', at, SHAPE.steps);
  assert.ok(delay !== null && delay <= DETECTION_STEPS, `delay ${delay}`);
});

test('answer-entropy collapse: alarms on entropy and distinct answers at the injected step within 4 steps', () => {
  const at = 14;
  const { recs, h } = runHealth({ entropyCollapseAt: at });
  for (const s of ['answer_entropy', 'distinct_answers', 'majority_ratio']) {
    const a = h.alarms.find((x) => x.series === s);
    assert.ok(a && a.step === at, `${s}: ${JSON.stringify(h.alarms)}`);
  }
  assert.equal(h.alarms.find((x) => x.series === 'answer_entropy')!.after, 0);
  const delay = detectionDelay(recs, 'answer_entropy', at, SHAPE.steps);
  assert.ok(delay !== null && delay <= DETECTION_STEPS, `delay ${delay}`);
});

test('reward bugs: a ground-truth leak, inverted rewards, {−1, 1} scaling', () => {
  const leak = runHealth({ groundTruthLeak: true }).h;
  assert.equal(leak.rewardBugs.length, 1, JSON.stringify(leak.rewardBugs));
  assert.equal(leak.rewardBugs[0].kind, 'ground-truth-leak');
  assert.ok(leak.rewardBugs[0].groups >= 10);

  const inv = runHealth({ inverted: true }).h;
  assert.deepEqual(inv.rewardBugs.map((b) => b.kind), ['inverted']);
  assert.equal(inv.rewardBugs[0].groups, SHAPE.steps * SHAPE.questions);
  assert.match(inv.rewardBugs[0].message, /1 − R/);

  const scaled = runHealth({ scaled: true }).h;
  assert.deepEqual(scaled.rewardBugs.map((b) => b.kind), ['scaled']);
  assert.match(scaled.rewardBugs[0].message, /\{−1, 1\} instead of \{0, 1\}/);
  // Said once, not an alarm per roll-out: the mismatch share is constant, so no alarm either.
  assert.deepEqual(scaled.alarms, []);
});

test('reward bugs: rewards from the vote in a run configured with CoRE name the vote\'s label', () => {
  const ctx = createRunContext();
  const recs = makeRun(SHAPE).map((g) => healthOf(g, { params: {}, configuredOperator: 'core' }, ctx));
  const bugs = analyseRun(recs).rewardBugs;
  assert.deepEqual(bugs.map((b) => b.kind), ['different-label']);
  assert.match(bugs[0].message, /rewarded class is the vote's label/);
  // Every group is explained: CoRE's graded rewards never equal the vote's binary ones.
  assert.equal(bugs[0].groups, recs.length);
});

test('the confidence premise: uninformative and misleading confidences are named', () => {
  const un = runHealth({ confidence: 'uninformative' }).h;
  assert.equal(un.premise.label.verdict, 'uninformative');
  assert.equal(un.premise.truth!.verdict, 'uninformative');
  assert.match(un.premise.label.message, /CoRE ≈ EC/);
  const mis = runHealth({ confidence: 'misleading' }).h;
  assert.equal(mis.premise.label.verdict, 'misleading');
  assert.equal(mis.premise.truth!.verdict, 'misleading');
  const none = runHealth({ confidence: 'none' }).h;
  assert.equal(none.premise.label.verdict, 'too few');
  assert.ok(none.notes.some((n) => /no confidences/.test(n)));
});

test('degenerate pluralities: every injected question is flagged, and the confidence-weighted vote rescues it', () => {
  const groups = makeRun(SHAPE, { degeneratePluralities: 0.3 });
  const injected = groups.filter((g) => g.rollouts.filter((r) => /\\boxed\{\}$/.test(r.response)).length * 2 >= g.rollouts.length).length;
  assert.ok(injected > 10);
  const { degenerate } = analyseRun(records(groups));
  assert.equal(degenerate.pluralities, injected);
  assert.equal(degenerate.rescued.cisc, injected);
  assert.equal(degenerate.examples[0].label, '');
});

test('how many roll-outs: accuracy per operator per N′, seeded, idf not refit; a full subsample scores as the group', () => {
  const groups = makeRun({ ...SHAPE, steps: 4, n: 16 });
  const a = analyseRun(records(groups, true)).rolloutsWhatIf!;
  const b = analyseRun(records(groups, true)).rolloutsWhatIf!;
  assert.deepEqual(a, b);
  assert.deepEqual(a.sizes, ['4', '8', 'full']);
  assert.equal(a.metric, 'accuracy');
  assert.equal(a.idfRefit, false);
  for (const op of ['majority', 'cisc', 'ec', 'core'] as const) assert.equal(a.values[op]!.length, 3);
  // More roll-outs, a better vote (on average over the run).
  assert.ok(a.values.majority![2]! >= a.values.majority![0]!);

  const g = prepareGroup(groups[5]);
  const all = subsampleGroup(g, Array.from({ length: g.n }, (_, i) => i));
  assert.deepEqual(Array.from(scoreGroup(all).results.core!.rewards), Array.from(scoreGroup(g).results.core!.rewards));
});

test('robust on thin logs: no ground truth, no confidence, no reward, one roll-out, one step', () => {
  const thin = runHealth({ noTruth: true, confidence: 'none', noRewards: true }).h;
  assert.equal(thin.premise.truth, null);
  assert.deepEqual(thin.rewardBugs, []);
  assert.ok(thin.series.every((s) => s.values.every((v) => v === null || Number.isFinite(v))));
  const tiny = analyseRun(records([{ step: 3, questionId: 'q', rollouts: [{ response: 'nothing' }] }]));
  assert.equal(tiny.groups, 1);
  assert.deepEqual(tiny.alarms, []);
  assert.ok(tiny.notes.some((n) => /1 step/.test(n)));
  assert.equal(JSON.stringify(tiny).includes('NaN'), false);
  const empty = analyseRun([]);
  assert.equal(empty.groups, 0);
});
