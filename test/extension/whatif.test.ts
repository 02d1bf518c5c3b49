// Run-wide what-ifs in worker threads: the re-score report against the engine group by
// group, cancellation leaving the caller's previous result intact, features cached in the
// workers, the κ × τ sweep and the dashboard rows — workers and in-process give the same numbers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersEqual, scoreGroup } from '../../src/engine';
import { RunStore } from '../../src/extension/model/run-store';
import { questionItem, storeSource, type RunEntry } from '../../src/extension/model/run-source';
import { WhatIfEngine, type Hooks } from '../../src/extension/workers/whatif-engine';
import { dashboardModel } from '../../src/extension/dashboard/dashboard-model';
import { defaultParams } from '../../src/extension/slider-params';
import { rng, synthRollouts, type ClassPlan } from '../../scripts/synth';

const dirs: string[] = [];
const stores: RunStore[] = [];
const engines: WhatIfEngine[] = [];
after(async () => {
  for (const s of stores) s.dispose();
  for (const e of engines) await e.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Steps of contested questions (a coherent minority that CoRE may lift) and easy ones; ground truth on even questions only. */
function writeRun(steps: number, perStep: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'cl-whatif-'));
  dirs.push(dir);
  const r = rng(5);
  for (let step = 1; step <= steps; step++) {
    const lines: string[] = [];
    for (let q = 0; q < perStep; q++) {
      const plan: ClassPlan[] =
        q % 3 !== 2
          ? [{ answer: '12', count: 8 + (q % 2), confidence: -0.4, path: 1 }, { answer: '15', count: 7, confidence: -0.4, path: 2, identical: true }, { answer: null, count: 2 }]
          : [{ answer: '42', count: 12, confidence: -0.3, path: 3 }, { answer: '7', count: 4, confidence: -0.6, path: 4 }];
      const rec: Record<string, unknown> = { kind: 'group', step, question_id: `q${q}`, rollouts: synthRollouts(r, plan, { bytes: 250 }) };
      if (q % 2 === 0) rec.ground_truth = q % 3 !== 2 ? '15' : '42';
      lines.push(JSON.stringify(rec));
    }
    writeFileSync(join(dir, `step-${step}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}

async function openRun(dir: string) {
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  stores.push(store);
  const run = store.add(dir, 'opened');
  await store.idle();
  return { store, run };
}

/** A run-wide re-score as the command runs it: the what-if engine on the store's groups. */
function rescore(engine: WhatIfEngine, store: RunStore, run: RunEntry, before: Record<string, number>, next: Record<string, number>, hooks: Hooks = {}) {
  return engine.rescore(storeSource(store, run), { operator: 'core', params: before }, { operator: 'core', params: next }, hooks);
}

const inProcessEngine = () => {
  const e = new WhatIfEngine({ workers: 0 });
  engines.push(e);
  return e;
};

const workers = () => {
  const e = new WhatIfEngine({ workers: 2, script: join(import.meta.dirname, 'whatif-worker.mjs'), chunk: 4 });
  engines.push(e);
  return e;
};

test('re-score in worker threads: flips, sign changes, gates and accuracy match the engine group by group', async () => {
  const { store, run } = await openRun(writeRun(3, 10));
  const engine = workers();
  const before = defaultParams();
  const next = { ...before, kappa: 0.5 };
  const report = await rescore(engine, store, run, before, next);
  assert.equal(report.cancelled, false);
  assert.equal(report.groups, 30);
  let flips = 0;
  let signs = 0;
  const withTruth: Record<number, [number, number, number]> = {};
  let i = 0;
  for (const [step, keys] of run.steps) {
    for (const k of keys) {
      const g = (await store.get(store.keyOf(run, k)!))!.prepared;
      const a = scoreGroup(g, { operators: ['core'] }).results.core!;
      const b = scoreGroup(g, { operators: ['core'], params: { kappa: 0.5 } }).results.core!;
      const d = report.diffs[i++];
      assert.equal(d.questionId, g.questionId);
      assert.equal(d.step, step);
      assert.equal(d.flipped, a.labelClass !== b.labelClass);
      assert.equal(d.gateBefore, a.gate);
      assert.equal(d.gateAfter, b.gate);
      if (d.flipped) flips++;
      for (let j = 0; j < g.n; j++) if (Math.sign(Math.round(a.advantages[j] * 1e9)) !== Math.sign(Math.round(b.advantages[j] * 1e9))) signs++;
      if (g.groundTruth !== null) {
        const t = (withTruth[step] ??= [0, 0, 0]);
        t[0]++;
        if (a.label !== null && answersEqual(a.label, g.groundTruth)) t[1]++;
        if (b.label !== null && answersEqual(b.label, g.groundTruth)) t[2]++;
      } else {
        assert.equal(d.correctBefore, null, 'no ground truth logged: no accuracy');
      }
    }
  }
  assert.ok(flips > 0, 'κ = 0.5 flips some questions');
  assert.equal(report.flips.length, flips);
  assert.equal(report.signChanges, signs);
  for (const st of report.steps) {
    const [n, b, a] = withTruth[st.step];
    assert.equal(st.withTruth, n);
    assert.equal(st.accuracyBefore, b / n);
    assert.equal(st.accuracyAfter, a / n);
  }
  // The same report in-process.
  const inProcess = await rescore(inProcessEngine(), store, run, before, next);
  assert.deepEqual(inProcess.diffs, report.diffs);
  assert.deepEqual(inProcess.flips, report.flips);
});

test('cancel midway: the report says cancelled, counts only what finished; the next run is complete', async () => {
  const { store, run } = await openRun(writeRun(4, 10));
  const engine = workers();
  const before = defaultParams();
  const next = { ...before, kappa: 0.5 };
  const full = await rescore(engine, store, run, before, next);
  let calls = 0;
  const cancelled = await rescore(engine, store, run, before, next, { cancelled: () => ++calls > 3 });
  assert.equal(cancelled.cancelled, true);
  assert.ok(cancelled.groups < full.groups, `${cancelled.groups} < ${full.groups}`);
  const again = await rescore(engine, store, run, before, next);
  assert.equal(again.cancelled, false);
  assert.deepEqual(again.diffs, full.diffs);
  // Per-step sums merge in the order chunks come back: equal to float rounding.
  const rounded = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)));
  assert.deepEqual(rounded(again.stats.steps), rounded(full.stats.steps));
});

test('κ × τ sweep and the dashboard rows in workers agree with the engine', async () => {
  const { store, run } = await openRun(writeRun(2, 9));
  const engine = workers();
  const src = storeSource(store, run);
  const sweep = await engine.sweep(src, 'core', defaultParams(), [0.1, 1], [0.25, 1]);
  assert.equal(sweep.cells.length, 4);
  for (const cell of sweep.cells) {
    let flips = 0;
    let correct = 0;
    let truth = 0;
    for (const [, keys] of run.steps) {
      for (const k of keys) {
        const g = (await store.get(store.keyOf(run, k)!))!.prepared;
        const s = scoreGroup(g, { operators: ['majority', 'core'], params: { kappa: cell.kappa, tau: cell.tau } });
        if (s.results.core!.labelClass !== s.results.majority!.labelClass) flips++;
        if (g.groundTruth !== null) {
          truth++;
          if (answersEqual(s.results.core!.label!, g.groundTruth)) correct++;
        }
      }
    }
    assert.equal(cell.groups, 18);
    assert.equal(cell.flips, flips, `flips at κ=${cell.kappa} τ=${cell.tau}`);
    assert.equal(cell.withTruth, truth);
    assert.equal(cell.correct, correct);
  }
  const dash = await engine.dashboard(src, defaultParams(), 'majority');
  assert.equal(dash.rows.length, 18);
  const model = dashboardModel(dash);
  assert.deepEqual(model.steps.map((s) => s.step), [1, 2]);
  const overturns = dash.rows.filter((r) => r.labels.core !== r.labels.majority).length;
  assert.equal(model.steps.reduce((t, s) => t + (s.overturns.core ?? 0), 0), overturns);
  assert.ok(model.recovery.length > 0, 'contested questions give recovery points');
  for (const p of model.recovery) assert.ok(p.x > 0 && p.y > 0 && p.voteBar >= 1);
  assert.equal(model.agreement.rates[0][0], 1);
});

test('the panel’s sensitivity intervals come from a worker and match the engine in-process', async () => {
  const { store, run } = await openRun(writeRun(1, 3));
  const engine = workers();
  const { sensitivity } = await import('../../src/engine');
  const { sensitivityRange } = await import('../../src/extension/whatif/sensitivity-range');
  for (const [, keys] of run.steps) {
    for (const k of keys) {
      const key = store.keyOf(run, k)!;
      const g = (await store.get(key))!;
      // sent by key: the group goes to its worker once (its entry read once), then the worker holds it
      const q = questionItem(store, key)!;
      let entries = 0;
      const item = { ...q.item, entry: () => (entries++, q.item.entry!()) };
      const fromWorker = await engine.sensitivity(q.runId, item, defaultParams());
      assert.deepEqual(await engine.sensitivity(q.runId, item, defaultParams()), fromWorker);
      assert.equal(entries, 1, 'the second request names the group by its key');
      const local = sensitivity(g.prepared, {});
      assert.deepEqual(fromWorker, local);
      const wire = sensitivityRange(fromWorker.kappa);
      assert.equal(wire.distance === null, !Number.isFinite(fromWorker.kappa.distance));
    }
  }
});

test('re-score input: prefill, "vs OPERATOR" baseline, range validation', async () => {
  const { parseWhatIfText, prefillText, validateRescoreText } = await import('../../src/extension/whatif/rescore-text');
  assert.equal(prefillText('core', defaultParams()), 'core kappa=0.1 tau=0.25 alpha=0.1');
  assert.deepEqual(parseWhatIfText('core kappa=0.5 vs majority'), { operator: 'core', baseline: 'majority', params: { kappa: 0.5 } });
  assert.deepEqual(parseWhatIfText('kappa=0.3'), { operator: null, baseline: null, params: { kappa: 0.3 } });
  assert.equal(parseWhatIfText('core kappa=0.5 vs nobody'), null);
  assert.equal(validateRescoreText('core kappa=0.5 vs majority'), null);
  assert.match(validateRescoreText('core kappa=1.5') ?? '', /κ.*outside \[0, 1\]/);
  assert.match(validateRescoreText('core tau=0') ?? '', /τ.*outside \(0/);
  assert.ok(validateRescoreText('core kappa=abc'));
  // The prefilled text is itself valid.
  assert.equal(validateRescoreText(`${prefillText('core', defaultParams())} vs majority`), null);
});

test("a run's health analysed on a worker thread, its records sent in parts, is the host's analysis", async () => {
  const { makeRun } = await import('../engine/health-runs');
  const { analyseRun, labelFreeCopies, createRunContext } = await import('../../src/engine');
  const { healthOf } = await import('../../src/cli/health');
  const groups = makeRun({ steps: 40, questions: 30, n: 8, accuracy: 0.5, seed: 3 }, { formatCollapseAt: 25 });
  const ctx = createRunContext();
  const records = groups.map((g) => healthOf(g, { params: {} }, ctx));
  assert.ok(records.length > 1000, 'more than one part');
  const engine = workers();
  const there = await engine.analyse(records);
  assert.deepEqual(there, analyseRun(labelFreeCopies(records)));
  assert.ok(there.alarms.length > 0, 'an analysis that found something');
  assert.equal((await engine.analyse([])).groups, 0);
});

test('one load → prepare → cache path: a group a view prepared is not read again by a re-score, nor one a re-score prepared by the background scoring', async () => {
  const engine = workers();
  // the entries the store hands the workers (a group a worker holds at its version goes by key, its entry unread)
  let entries = 0;
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false, prepare: (runId, item, opts) => engine.prepare(runId, { ...item, entry: () => (entries++, item.entry!()) }, opts) });
  stores.push(store);
  const run = store.add(writeRun(2, 6), 'opened');
  await store.summariesDone();
  assert.equal(entries, run.groups, 'the first scoring pass reads every group once');
  const viewed = store.keyOf(run, run.steps.get(1)!.at(0)!)!;
  assert.ok((await store.get(viewed))?.previews.length, 'the view gets its previews');
  const read: string[] = [];
  const source = storeSource(store, run);
  const counting = { id: source.id, items: () => source.items().map((it) => ({ ...it, entry: () => (read.push(`${it.step}/${it.questionId}`), it.entry!()) })) };
  const r = await engine.rescore(counting, { operator: 'majority', params: defaultParams() }, { operator: 'core', params: defaultParams() });
  assert.equal(r.failed.length + r.skipped, 0);
  assert.ok(!read.includes(`${viewed.step}/${viewed.questionId}`), `the viewed group went by key (read: ${read.join(', ')})`);
  assert.equal(read.length, run.groups - 1, 'every other group read once');
  // another scoring pass (new settings) is served from the workers' cache: no group read again
  entries = 0;
  store.invalidateSummaries();
  await store.summariesDone();
  assert.equal(entries, 0);
  assert.equal(run.summaries.size, run.groups);
});
