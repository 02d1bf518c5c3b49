// The run dashboard's numbers against the CLI's, and how its charts are drawn: pseudo-label
// accuracy with one definition on every surface (the dashboard model and `report` agree, also for
// T3RL and MS-TTRL, which run only on the questions that log verifications or outcome checks); the
// recovery plot's axis holds the confidence-lowered bars; operator colours are distinguishable.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../src/extension/model/run-store';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { dashboardModel, dashboardRecords } from '../../src/extension/dashboard/dashboard-model';
import { defaultParams } from '../../src/extension/slider-params';
import { buildReport, renderTable } from '../../src/cli/report';
import { accuracyOf, countAccuracy, emptyAccuracy, formatAccuracy, OPERATOR_IDS } from '../../src/engine';
import { OPERATOR_STYLES } from '../../webview/dashboard/style';
import { placeBar, recoveryAxis } from '../../webview/dashboard/recovery';
import { rng, synthRollouts, type ClassPlan } from '../../scripts/synth';

const dirs: string[] = [];
const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanup) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Two steps of 6 questions, every one with ground truth: verifications (T3RL) on q0 and q1 only,
 * outcome checks (MS-TTRL) on q2 only. The vote is right on even questions.
 */
function writeRun(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cl-dash-'));
  dirs.push(dir);
  const r = rng(17);
  for (let step = 1; step <= 2; step++) {
    const lines: string[] = [];
    for (let q = 0; q < 6; q++) {
      const plan: ClassPlan[] = [
        { answer: '12', count: 9, confidence: -0.4, path: 1, verified: true },
        { answer: '15', count: 5, confidence: -0.5, path: 2, verified: false },
      ];
      const rec: Record<string, unknown> = { kind: 'group', step, question_id: `q${q}`, ground_truth: q % 2 === 0 ? '12' : '15', rollouts: synthRollouts(r, plan, { bytes: 200, withVerification: q < 2 }) };
      if (q === 2) rec.outcome_checks = [{ answer: '12', passed: 3, trials: 4 }, { answer: '15', passed: 0, trials: 4 }];
      lines.push(JSON.stringify(rec));
    }
    writeFileSync(join(dir, `step-${step}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}

test('accuracy: one definition — over the questions with ground truth the operator ran on', () => {
  const c = emptyAccuracy();
  for (const x of [true, false, null, undefined, true]) countAccuracy(c, x);
  assert.deepEqual(c, { correct: 2, over: 3 });
  assert.equal(accuracyOf(c), 2 / 3);
  assert.equal(accuracyOf(emptyAccuracy()), null);
  assert.equal(formatAccuracy(1, 2, 12), '100.0% (2)');
  assert.equal(formatAccuracy(0.5, 12, 12), '50.0%');
  assert.equal(formatAccuracy(null, 0, 12), '-');
});

test('dashboard model and `report` give the same accuracy per step and operator (T3RL, MS-TTRL on some questions only)', async () => {
  const dir = writeRun();
  const report = await buildReport(dir, { jobs: 0, params: defaultParams() }, () => {});
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  cleanup.push(() => store.dispose());
  const run = store.add(dir, 'opened');
  await store.idle();
  const engine = new WhatIfEngine({ workers: 0 });
  cleanup.push(() => engine.dispose());
  const model = dashboardModel(await engine.dashboard(storeSource(store, run), defaultParams(), 'majority'));
  assert.deepEqual(model.steps.map((s) => s.step), report.steps.map((s) => s.step));
  let compared = 0;
  for (const [i, s] of model.steps.entries()) {
    const r = report.steps[i];
    assert.equal(s.withTruth, r.with_truth);
    for (const op of OPERATOR_IDS) {
      assert.equal(s.accuracy[op] ?? null, r.accuracy[op] ?? null, `step ${s.step} ${op} accuracy`);
      assert.equal(s.accuracyGroups[op], r.accuracy_groups[op], `step ${s.step} ${op} denominator`);
      compared++;
    }
    // The operators that run on some questions only are counted over those.
    assert.equal(s.accuracyGroups.t3rl, 2);
    assert.ok((s.accuracyGroups.msttrl ?? 0) >= 1 && (s.accuracyGroups.msttrl ?? 0) < s.withTruth, `MS-TTRL over ${s.accuracyGroups.msttrl}`);
    assert.equal(s.accuracyGroups.majority, 6);
  }
  assert.equal(compared, 2 * OPERATOR_IDS.length);
  // T3RL is right on q0 (vote 12 = truth) and its verification-weighted label on q1.
  const t3 = report.groups.filter((g) => g.step === 1 && 't3rl' in g.labels);
  assert.equal(model.steps[0].accuracy.t3rl, t3.filter((g) => g.correct.t3rl).length / t3.length);
  // The run-wide figure in the agreement table is the report's total.
  for (const [i, op] of model.agreement.operators.entries()) {
    assert.equal(model.agreement.accuracy[i], report.total.accuracy[op] ?? null, `${op} run accuracy`);
    assert.equal(model.agreement.withTruth[i], report.total.accuracy_groups[op] ?? 0, `${op} run denominator`);
  }
  // Shown the same way: "x% (n)" when over fewer questions than have ground truth.
  const t = model.agreement.operators.indexOf('t3rl');
  const shown = formatAccuracy(model.agreement.accuracy[t], model.agreement.withTruth[t], model.withTruth);
  assert.match(shown, /^\d+\.\d% \(4\)$/);
  assert.ok(renderTable(report).includes(shown), renderTable(report));
});

test('recovery plot: the y-axis holds confidence-lowered bars below 1/3; only extreme ones are clipped, as arrows', () => {
  const pts = [
    { y: 1.4, voteBar: 3, confidenceBar: 0.2 },
    { y: 0.9, voteBar: 2, confidenceBar: 0.05 },
    { y: 2.5, voteBar: 5, confidenceBar: 4 },
  ];
  const axis = recoveryAxis(pts.flatMap((p) => [p.y, p.voteBar, p.confidenceBar]));
  for (const p of pts) for (const v of [p.y, p.voteBar, p.confidenceBar]) {
    assert.ok(v >= axis.min && v <= axis.max, `${v} in [${axis.min}, ${axis.max}]`);
    assert.deepEqual(placeBar(v, axis), { y: v, clipped: null });
  }
  assert.ok(axis.min < 0.05);
  const extreme = recoveryAxis([1, 2, 0, 1e-9, 1e9]);
  assert.deepEqual(placeBar(1e-9, extreme), { y: extreme.min, clipped: 'below' });
  assert.deepEqual(placeBar(0, extreme), { y: extreme.min, clipped: 'below' });
  assert.deepEqual(placeBar(1e9, extreme), { y: extreme.max, clipped: 'above' });
});

// The default themes' chart colours (VS Code's colour registry: Dark Modern / Light Modern).
const THEMES: Record<string, Record<string, string>> = {
  dark: { foreground: '#cccccc', 'charts-red': '#f14c4c', 'charts-blue': '#3794ff', 'charts-yellow': '#cca700', 'charts-orange': '#d18616', 'charts-green': '#89d185', 'charts-purple': '#b180d7' },
  light: { foreground: '#3b3b3b', 'charts-red': '#e51400', 'charts-blue': '#1a85ff', 'charts-yellow': '#bf8803', 'charts-orange': '#d18616', 'charts-green': '#388a34', 'charts-purple': '#652d90' },
};

function lab(hex: string): [number, number, number] {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  const xyz = [
    (0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2]) / 0.95047,
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2],
    (0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2]) / 1.08883,
  ].map((t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116));
  return [116 * xyz[1] - 16, 500 * (xyz[0] - xyz[1]), 200 * (xyz[1] - xyz[2])];
}

test('operator colours: every pair is far apart in both default themes, and no two share colour, dash and point style', () => {
  const ops = OPERATOR_IDS;
  for (const [name, theme] of Object.entries(THEMES)) {
    for (let i = 0; i < ops.length; i++) {
      for (let j = i + 1; j < ops.length; j++) {
        const a = lab(theme[OPERATOR_STYLES[ops[i]].color]);
        const b = lab(theme[OPERATOR_STYLES[ops[j]].color]);
        const dE = Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
        // ΔE*ab ≈ 2.3 is just noticeable; orange vs yellow (the old CISC/EC pair) is 23 in Dark Modern, 9.5 in Light Modern.
        // Eleven operators share seven theme colours: a pair closer than that differs in both line dash and point style.
        const [si, sj] = [OPERATOR_STYLES[ops[i]], OPERATOR_STYLES[ops[j]]];
        const shapeApart = si.pointStyle !== sj.pointStyle && si.dash.join() !== sj.dash.join();
        assert.ok(dE > 25 || shapeApart, `${name}: ${ops[i]} vs ${ops[j]} ΔE = ${dE.toFixed(1)}`);
      }
    }
  }
  assert.equal(new Set(ops.map((o) => `${OPERATOR_STYLES[o].color}|${OPERATOR_STYLES[o].pointStyle}`)).size, ops.length);
});

test("the panel's run health, analysed on a what-if worker, is the model's own analysis", async () => {
  const dir = writeRun();
  const engine = new WhatIfEngine({ workers: 1, script: join(import.meta.dirname, 'whatif-worker.mjs') });
  cleanup.push(() => engine.dispose());
  let analysed = 0;
  const store = new RunStore({ configuredOperator: () => 'core', params: defaultParams, follow: false, analyse: (rs) => (analysed++, engine.analyse(rs)) });
  cleanup.push(() => store.dispose());
  const run = store.add(dir, 'opened');
  await store.idle();
  const data = await engine.dashboard(storeSource(store, run), defaultParams(), 'core');
  const records = dashboardRecords(data);
  assert.ok(records.length > 0);
  const before = analysed;
  const offHost = dashboardModel(data, await store.analyseHealth(records));
  assert.equal(analysed, before + 1, 'analysed by the worker');
  assert.deepEqual(offHost, dashboardModel(data));
});
