// Two runs side by side from cached features: `compareRuns` of two runs of 10,000 groups each
// (100 steps × 100 questions × 16 roll-outs), their health analyses included (every series'
// change-point test with 999 permutations), from the per-group health records — what the
// extension's what-if workers and a persisted pipeline keep per group. The baseline, measured in
// the same run, is the two health analyses alone (what `health` does with the same records), so
// the ratio is the comparison's own cost on top. Prints one JSON line with `rows` for bench/run.mjs.
// Run: node --import tsx bench/compare-bench.ts [--groups 10000]
import { createRunContext } from '../src/engine';
import { analyseRun, type GroupHealth } from '../src/engine/analysis/run-health';
import { compareRuns } from '../src/engine/analysis/runs-compare';
import { healthOf } from '../src/cli/health';
import { makeRun } from '../test/engine/health-runs';

const args = process.argv.slice(2);
const groups = args.includes('--groups') ? Number(args[args.indexOf('--groups') + 1]) : 10000;
const QUESTIONS = 100;
const steps = Math.ceil(groups / QUESTIONS);

/** Health records of a run: 400 distinct groups scored once, tiled over steps × questions. */
function records(seed: number, accuracy: number, collapseAt: number): GroupHealth[] {
  const ctx = createRunContext();
  const seeds = makeRun({ steps: 8, questions: 50, n: 16, accuracy, seed }).map((g) => healthOf(g, { params: {}, configuredOperator: 'majority' }, ctx));
  const collapsed = makeRun({ steps: 1, questions: 50, n: 16, accuracy, seed: seed + 1 }, { entropyCollapseAt: 0 }).map((g) => healthOf(g, { params: {} }, ctx));
  const out: GroupHealth[] = [];
  for (let s = 0; s < steps; s++)
    for (let q = 0; q < QUESTIONS && out.length < groups; q++) {
      const from = s >= collapseAt && q % 2 === 0 ? collapsed[q % collapsed.length] : seeds[(s * QUESTIONS + q) % seeds.length];
      out.push({ ...from, step: s, questionId: `q${q}` });
    }
  return out;
}

const t0 = performance.now();
const a = records(3, 0.5, 60);
const b = records(7, 0.6, 40);
console.error(`records: 2 × ${a.length} groups in ${((performance.now() - t0) / 1000).toFixed(1)} s (setup, not timed)`);

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const ours: number[] = [];
const base: number[] = [];
let summary = '';
for (let round = 0; round < 3; round++) {
  let t = performance.now();
  const ha = analyseRun(a, { configuredOperator: 'majority' });
  const hb = analyseRun(b, { configuredOperator: 'core' });
  base.push((performance.now() - t) / 1000);
  t = performance.now();
  const c = compareRuns({ name: 'a', operator: 'majority', records: a, health: analyseRun(a, { configuredOperator: 'majority' }) }, { name: 'b', operator: 'core', records: b, health: analyseRun(b, { configuredOperator: 'core' }) });
  ours.push((performance.now() - t) / 1000);
  summary = `${c.steps.length} steps, ${c.shared.pairs} pairs, ${c.shared.part} parting, alarms ${ha.alarms.length} + ${hb.alarms.length}`;
}
const o = median(ours);
const bl = median(base);
console.error(`compare: ${o.toFixed(2)} s (median of 3); the two health analyses alone ${bl.toFixed(2)} s; ${summary}`);
const rows = [[`compare two runs of ${a.length.toLocaleString('en')} groups each from cached features (health analyses included; ${summary})`, `${o.toFixed(2)} s`, `${bl.toFixed(2)} s (the two health analyses alone)`, `${(o / bl).toFixed(2)}×`, '< 3 s', o < 3]];
console.log(JSON.stringify({ groups: a.length, seconds: o, baselineSeconds: bl, rows }));
