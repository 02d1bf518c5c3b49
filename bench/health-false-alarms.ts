// The run-health change-point test's false-alarm rate on stationary synthetic runs (docs/health.md
// §2): R seeded runs without any injected fault, each analysed as `consensus-lens health` does;
// prints how many raised any alarm. `npx tsx bench/health-false-alarms.ts [runs] [steps]`.
import { createRunContext } from '../src/engine';
import { analyseRun } from '../src/engine/analysis/run-health';
import { healthOf } from '../src/cli/health';
import { makeRun } from '../test/engine/health-runs';

const runs = Number(process.argv[2] ?? 100);
const steps = Number(process.argv[3] ?? 30);
let withAlarm = 0;
let alarms = 0;
let raw = 0;
for (let seed = 1; seed <= runs; seed++) {
  const ctx = createRunContext();
  const recs = makeRun({ steps, questions: 6, n: 8, accuracy: 0.5, seed: 1000 + seed }).map((g) => healthOf(g, { params: {} }, ctx));
  const h = analyseRun(recs);
  if (h.alarms.length) withAlarm++;
  if (process.env.VERBOSE) for (const a of h.alarms) console.log(`seed ${1000 + seed}: ${a.message} (p = ${a.p.toFixed(4)})`);
  alarms += h.alarms.length;
  // The same runs with no smallest relevant change: the permutation test alone.
  const pure = analyseRun(recs, { minChangeScale: 0 });
  if (pure.alarms.length) raw++;
}
console.log(`${runs} stationary runs of ${steps} steps: ${withAlarm} with an alarm (${alarms} alarms); without the smallest-change rule ${raw} (${((100 * raw) / runs).toFixed(1)}%; nominal ≤ 5%)`);
