// The host's store on a real run folder (RunIndex underneath): lazy index, background summaries,
// the panel's view against the engine, live following, re-scoring a run, and the benchmarks that
// do not need VS Code (re-scoring one N = 64 question; a step of 1,000 questions).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRunContext, prepareGroup, scoreGroup } from '../../src/engine';
import { RunStore } from '../../src/extension/model/run-store';
import { buildView, outcomeContext } from '../../src/extension/model/scoring';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { filterQuestions } from '../../src/extension/explorer/filters';
import { defaultParams } from '../../src/extension/slider-params';
import { rng, synthRollouts, type ClassPlan } from '../../scripts/synth';

const dirs: string[] = [];
const stores: RunStore[] = [];
after(() => {
  for (const s of stores) s.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Coherent-minority groups (equal confidence): CoRE overturns the vote at κ = 0.1, not at κ = 1. */
function writeRun(steps = 2, perStep = 4): string {
  const dir = mkdtempSync(join(tmpdir(), 'cl-store-'));
  dirs.push(dir);
  const r = rng(11);
  for (let step = 1; step <= steps; step++) {
    const lines: string[] = [];
    for (let q = 0; q < perStep; q++) {
      const overturn = q % 2 === 0;
      const plan: ClassPlan[] = overturn
        ? [{ answer: '12', count: 9, confidence: -0.4, path: 1 }, { answer: '15', count: 7, confidence: -0.4, path: 2, identical: true }]
        : [{ answer: '42', count: 12, confidence: -0.3, path: 3 }, { answer: '7', count: 4, confidence: -0.6, path: 4 }];
      const ros = synthRollouts(r, plan, { bytes: 200 }).map((x) => ({ ...x, reward: x.response.includes(overturn ? '\\boxed{12}' : '\\boxed{42}') ? 1 : 0 }));
      lines.push(JSON.stringify({ kind: 'group', step, question_id: `q${q}`, ground_truth: overturn ? '15' : '42', rollouts: ros }));
    }
    writeFileSync(join(dir, `step-${step}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}

function newStore(): RunStore {
  const s = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, pollMs: 100, idleMs: 200 });
  stores.push(s);
  return s;
}

test('a run opens into steps and questions; summaries mark overturns and gates', async () => {
  const store = newStore();
  const run = store.add(writeRun(), 'opened');
  await store.summariesDone();
  assert.equal(run.error, null);
  assert.deepEqual([...run.steps.keys()], [1, 2]);
  assert.equal(run.groups, 8);
  assert.equal(run.rollouts, 8 * 16);
  const q0 = store.summary({ runId: run.id, step: 1, questionId: 'q0' })!;
  const q1 = store.summary({ runId: run.id, step: 1, questionId: 'q1' })!;
  assert.equal(q0.overturn, true);
  assert.equal(q0.label, '15');
  assert.equal(q0.majorityLabel, '12');
  assert.equal(q1.overturn, false);
  assert.ok(q0.gate > 0 && q0.gate <= 1);
  // Logged rewards follow the vote; the configured operator is majority: no mismatch.
  assert.equal(q0.mismatches, 0);
});

test("the panel's view carries the engine's numbers", async () => {
  const store = newStore();
  const run = store.add(writeRun(1, 2), 'opened');
  await store.idle();
  const key = { runId: run.id, step: 1, questionId: 'q0' };
  const g = (await store.get(key))!;
  const view = buildView(g, defaultParams(), 'core');
  const s = scoreGroup(g.prepared, { configuredOperator: 'core' });
  assert.equal(view.n, 16);
  assert.equal(view.overturn, true);
  assert.equal(view.gate, s.results.core!.gate);
  for (const r of view.rollouts) {
    assert.equal(r.rewards.core, s.results.core!.rewards[r.index]);
    assert.equal(r.rewards.majority, s.results.majority!.rewards[r.index]);
    assert.equal(r.mass, s.results.core!.mass![r.index]);
    assert.equal(r.advantages.core, s.results.core!.advantages[r.index]);
    assert.equal(r.inSupport, s.results.core!.support!.includes(r.index));
  }
  // With CoRE configured, the logged (majority) rewards disagree: mismatches are flagged.
  assert.ok(view.mismatches > 0);
  assert.ok(view.rollouts.some((r) => r.mismatch));
  // Classes, edges (within classes only) and the operator strip.
  assert.equal(view.classes.length, 2);
  assert.ok(Math.abs(view.classes.reduce((a, c) => a + c.mass, 0) - 1) < 1e-9);
  for (const e of view.edges) assert.equal(view.rollouts[e.source].classIndex, view.rollouts[e.target].classIndex);
  assert.equal(view.operators.find((o) => o.operator === 'core')!.label, '15');
  assert.equal(view.operators.find((o) => o.operator === 'core')!.correct, true);
  assert.equal(view.operators.find((o) => o.operator === 't3rl')!.available, false);
  // κ = 1: CoRE falls back to the vote here (equal confidences).
  const v1 = buildView(g, { ...defaultParams(), kappa: 1 }, 'core');
  assert.equal(v1.operators.find((o) => o.operator === 'core')!.label, '12');
  assert.equal(v1.overturn, false);
  // Roll-out texts are not kept; previews are short.
  assert.ok(g.previews.every((p) => p.length <= 160));
});

test('a group appended to a followed file arrives live', async () => {
  const store = newStore();
  const dir = writeRun(1, 2);
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  const arrived = new Promise<void>((resolve) => {
    store.onChange((e) => {
      if (e.kind === 'run' && run.steps.has(7)) resolve();
    });
  });
  const r = rng(3);
  const ros = synthRollouts(r, [{ answer: '5', count: 6 }], { bytes: 100 });
  appendFileSync(join(dir, 'step-1.jsonl'), JSON.stringify({ kind: 'group', step: 7, question_id: 'live', rollouts: ros }) + '\n');
  await arrived;
  assert.equal(run.latestStep, 7);
  await store.summariesDone();
  assert.ok(store.summary({ runId: run.id, step: 7, questionId: 'live' }));
});

test('the run that grows last is the one the status bar follows, not the first discovered', async () => {
  const store = newStore();
  const first = store.add(writeRun(1, 2), 'workspace');
  const second = store.add(writeRun(1, 2), 'workspace');
  await store.summariesDone();
  // Reading a run for the first time is not growth.
  assert.equal(store.lastGrown(), undefined);
  const grew = (run: typeof first, step: number) =>
    new Promise<void>((resolve) => {
      const sub = store.onChange((e) => {
        if (e.kind === 'run' && e.runId === run.id && run.steps.has(step)) {
          sub.dispose();
          resolve();
        }
      });
    });
  const r = rng(4);
  const append = (run: typeof first, step: number) => appendFileSync(join(run.path, 'step-1.jsonl'), JSON.stringify({ kind: 'group', step, question_id: 'live', rollouts: synthRollouts(r, [{ answer: '5', count: 6 }], { bytes: 100 }) }) + '\n');
  let arrived = grew(second, 3);
  append(second, 3);
  await arrived;
  assert.equal(store.lastGrown()?.id, second.id);
  const clock = store.growthClock;
  arrived = grew(first, 4);
  append(first, 4);
  await arrived;
  assert.equal(store.lastGrown()?.id, first.id);
  assert.ok(first.grownAt > clock && second.grownAt <= clock);
});

test('re-scoring a run reports the pseudo-labels that flip', async () => {
  const store = newStore();
  const run = store.add(writeRun(2, 4), 'opened');
  await store.summariesDone();
  // The command's path: the what-if engine (here in-process) on the store's complete groups.
  const engine = new WhatIfEngine({ workers: 0 });
  const report = await engine.rescore(storeSource(store, run), { operator: 'core', params: defaultParams() }, { operator: 'core', params: { ...defaultParams(), kappa: 1 } });
  await engine.dispose();
  assert.equal(report.groups, 8);
  // Expected flips, question by question, straight from the engine.
  let expected = 0;
  for (const [, keys] of run.steps) {
    for (const k of keys) {
      const g = (await store.get(store.keyOf(run, k)!))!;
      const a = scoreGroup(g.prepared, { operators: ['core'] }).results.core!.label;
      const b = scoreGroup(g.prepared, { operators: ['core'], params: { kappa: 1 } }).results.core!.label;
      if (a !== b) expected++;
    }
  }
  assert.ok(expected > 0);
  assert.equal(report.flips.length, expected);
  assert.ok(report.flips.every((f) => f.before === '15' && f.after === '12'));
  assert.deepEqual(report.changed, { kappa: 1 });
  assert.ok(report.accuracyBefore !== null && report.accuracyAfter !== null && report.accuracyAfter < report.accuracyBefore);
});

test('a step of 1,000 questions lists every question with its summary (timing: bench/extension-bench.ts)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-big-'));
  dirs.push(dir);
  const lines: string[] = [];
  for (let q = 0; q < 1000; q++) lines.push(JSON.stringify({ kind: 'group', step: 1, question_id: `q${q}`, rollouts: [{ response: `so \\boxed{${q % 3}}`, mean_logprob: -0.1 }, { response: 'so \\boxed{1}', mean_logprob: -0.2 }] }));
  writeFileSync(join(dir, 'big.jsonl'), lines.join('\n') + '\n');
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  stores.push(store);
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  const visible = filterQuestions(run.steps.get(1)!, (k) => run.summaries.get(k), 'all', 'gate');
  assert.equal(visible.length, 1000);
  assert.ok(visible.every((k) => store.summary(store.keyOf(run, k)!)));
});

test('MS-TTRL in a question scored alone (panel, pair, roll-out document) and in the explorer sees the outcome cache its earlier steps left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-msttrl-'));
  dirs.push(dir);
  // q at steps 1–3: "1" judged Wrong at step 1 stays Wrong (its 8/8 at step 2 is ignored); step 3
  // logs no checks and is scored from the cache alone; p is a question of its own
  const steps: { answers: string[]; checks: { answer: string; passed: number; trials: number }[] }[] = [
    { answers: ['1', '2', '3'], checks: [{ answer: '1', passed: 1, trials: 8 }, { answer: '2', passed: 5, trials: 8 }] },
    { answers: ['1', '2', '3', '3'], checks: [{ answer: '1', passed: 8, trials: 8 }, { answer: '2', passed: 6, trials: 8 }] },
    { answers: ['2', '1'], checks: [] },
  ];
  const loop = createRunContext();
  const groups = steps.map((s, i) => ({ step: i + 1, questionId: 'q', rollouts: s.answers.map((a, j) => ({ response: `so \\boxed{${a}} (${j})`, answer: a })), outcomeChecks: s.checks }));
  // the rewards the training loop logged: MS-TTRL over the run in order
  const logged = groups.map((g) => Array.from(scoreGroup(prepareGroup(g), { operators: ['msttrl'] }, loop).results.msttrl!.rewards));
  assert.equal(logged[1][0], 0);
  for (const [i, g] of groups.entries()) {
    const line = (qid: string) => JSON.stringify({ kind: 'group', step: g.step, question_id: qid, outcome_checks: g.outcomeChecks, extra: { operator: 'msttrl' }, rollouts: g.rollouts.map((r, j) => ({ response: r.response, reward: logged[i][j] })) });
    writeFileSync(join(dir, `step-${g.step}.jsonl`), `${line('q')}\n${line('p')}\n`);
  }
  const store = new RunStore({ configuredOperator: () => 'msttrl', params: defaultParams, pollMs: 100, idleMs: 200 });
  stores.push(store);
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  assert.equal(run.error, null);
  for (const step of [1, 2, 3]) {
    const key = { runId: run.id, step, questionId: 'q' };
    const history = await store.outcomeHistory(key);
    assert.deepEqual(
      history.map((h) => h.step),
      [1, 2].filter((s) => s < step),
    );
    const v = buildView((await store.get(key))!, defaultParams(), 'msttrl', outcomeContext(history, defaultParams()));
    assert.deepEqual(
      v.rollouts.map((r) => r.rewards.msttrl),
      logged[step - 1],
      `step ${step}`,
    );
    assert.equal(v.mismatches, 0, `step ${step}: the logged rewards are MS-TTRL's`);
    assert.ok(v.rollouts.every((r) => !r.mismatch));
    // the explorer's summary (the background scoring, in run order) agrees
    const summary = store.summary(key)!;
    assert.equal(summary.mismatches, 0);
    assert.deepEqual(summary.health?.rewards?.expected, logged[step - 1], 'the health record checks against the same rewards');
    // p at step 2 was scored in the same pass: its own cache, so its "1" is Correct at 8/8
    if (step === 2) assert.ok(buildView((await store.get({ ...key, questionId: 'p' }))!, defaultParams(), 'msttrl').rollouts[0].rewards.msttrl! > 0);
  }
  // alone, without its history, step 2 would reward the Wrong "1": the check fails without the fix
  const alone = buildView((await store.get({ runId: run.id, step: 2, questionId: 'q' }))!, defaultParams(), 'msttrl');
  assert.ok(alone.rollouts[0].rewards.msttrl! > 0);
  assert.ok(alone.mismatches > 0);
});
