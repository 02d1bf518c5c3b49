// Extension-host work that needs no VS Code, timed: re-scoring one N = 64
// question after a slider move (median), listing a step of 1,000 questions in the explorer, and
// opening a run of 100,000 roll-outs. Prints one JSON line with `rows` for bench/run.mjs.
// Run: node --import tsx bench/extension-bench.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore, questionKeyString } from '../src/extension/model/run-store';
import { buildView, storeGroup } from '../src/extension/model/scoring';
import { filterQuestions } from '../src/extension/explorer/filters';
import { defaultParams } from '../src/extension/slider-params';
import { rng, synthRollouts, type ClassPlan } from '../scripts/synth';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows: [string, string, string, string, string, boolean][] = [];
const dirs: string[] = [];

function sliderRescore(): void {
  const r = rng(5);
  const plan: ClassPlan[] = [
    { answer: '12', count: 30, confidence: -0.5, path: 1 },
    { answer: '15', count: 22, confidence: -0.3, path: 2 },
    { answer: '7', count: 12, confidence: -0.9, path: 3 },
  ];
  const ros = synthRollouts(r, plan, { bytes: 2048, rich: true });
  const g = storeGroup({ step: 1, questionId: 'bench', rollouts: ros.map((x) => ({ response: x.response, meanLogprob: x.mean_logprob })) }, 'run', 'run');
  for (let i = 0; i < 10; i++) buildView(g, { ...defaultParams(), kappa: i / 10 }, 'core'); // JIT warm-up
  const times: number[] = [];
  for (let i = 0; i < 41; i++) {
    const t0 = performance.now();
    buildView(g, { ...defaultParams(), kappa: (i % 10) / 10 }, 'core');
    times.push(performance.now() - t0);
  }
  const m = median(times);
  rows.push(['panel re-score of one N = 64 question after a slider move (all operators, full view)', `${m.toFixed(2)} ms median`, '—', '—', '< 10 ms', m < 10]);
}

async function expandStep(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-bench-step-'));
  dirs.push(dir);
  const lines: string[] = [];
  for (let q = 0; q < 1000; q++) lines.push(JSON.stringify({ kind: 'group', step: 1, question_id: `q${q}`, rollouts: [{ response: `so \\boxed{${q % 3}}`, mean_logprob: -0.1 }, { response: 'so \\boxed{1}', mean_logprob: -0.2 }] }));
  writeFileSync(join(dir, 'big.jsonl'), lines.join('\n') + '\n');
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  const run = store.add(dir, 'opened');
  await store.summariesDone();
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const visible = filterQuestions(run.steps.get(1)!, (key) => run.summaries.get(key), 'all', 'gate');
    visible.map((key) => {
      const qk = store.keyOf(run, key)!;
      return { key: qk, summary: store.summary(qk), id: questionKeyString(qk.step, qk.questionId) };
    });
    times.push(performance.now() - t0);
  }
  store.dispose();
  const m = median(times);
  rows.push(['explorer: a step of 1,000 questions, index → rows sorted by gate (host side)', `${m.toFixed(1)} ms median`, '—', '—', '< 200 ms', m < 200]);
}

async function openRun(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-bench-100k-'));
  dirs.push(dir);
  const lines: string[] = [];
  for (let q = 0; q < 1563; q++) {
    const rollouts = Array.from({ length: 64 }, (_, i) => ({ response: `path ${i % 5}: the value is \\boxed{${(i * 7 + q) % 5}}`, mean_logprob: -0.1 * (i % 7) }));
    lines.push(JSON.stringify({ kind: 'group', step: Math.floor(q / 100), question_id: `q${q}`, rollouts }));
  }
  writeFileSync(join(dir, 'run.jsonl'), lines.join('\n') + '\n');
  const store = new RunStore({ configuredOperator: () => 'majority', params: defaultParams, follow: false });
  const t0 = performance.now();
  const run = store.add(dir, 'opened');
  await store.idle();
  const ms = performance.now() - t0;
  store.dispose();
  rows.push([`explorer: open a run of ${run.rollouts} roll-outs (steps and questions listed)`, `${ms.toFixed(0)} ms`, '—', '—', 'opens at once', ms < 3000]);
}

(async () => {
  sliderRescore();
  await expandStep();
  await openRun();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  console.log(JSON.stringify({ rows }));
})();
