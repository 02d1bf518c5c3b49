// Micro-benchmark of the replicator dynamics: the JavaScript path against the WebAssembly SIMD
// kernel (src/engine/dynamics/replicator.wat) on the same prepared groups, in one process,
// interleaved, best of several rounds. Two measures per path:
//   dynamics: `replicatorJs` / `replicatorWasm` alone on CoRE's calibrated blocks (default params);
//   CoRE run: `equilibrium('core', …)` on a prepared group (blocks, dynamics, read-outs), what a
//             what-if re-score pays per group, with `replicator` switched between the two paths.
// Input: .bench/core-200.jsonl (made here when missing: bench/make-groups.ts, 200 groups × 64).
// Usage: node --import tsx bench/replicator-bench.ts [GROUPS.jsonl] [--rounds 7]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { prepareGroup, DEFAULT_PARAMS, shiftOf, type Group, type PreparedGroup } from '../src/engine';
import { classAffinity, equilibrium } from '../src/engine/operators/equilibrium';
import { confidenceWeights } from '../src/engine/operators/vote';
import {
  replicatorJs,
  replicatorWasm,
  replicatorWasmAvailable,
  setReplicatorWasmEnabled,
  type AffinityBlock,
  type ReplicatorOptions,
} from '../src/engine/dynamics/replicator';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 7;
const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--rounds') ?? '.bench/core-200.jsonl';
if (!existsSync(file)) {
  mkdirSync('.bench', { recursive: true });
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/make-groups.ts', file, '200'], { stdio: 'inherit' });
}
if (!replicatorWasmAvailable()) throw new Error('no WebAssembly SIMD on this thread: nothing to compare');

const groups: PreparedGroup[] = readFileSync(file, 'utf8')
  .trim()
  .split('\n')
  .map((l): Group => {
    const g = JSON.parse(l);
    return { step: g.step, questionId: g.question_id, rollouts: g.rollouts.map((r: { response: string; mean_logprob?: number }) => ({ response: r.response, meanLogprob: r.mean_logprob })) };
  })
  .map((g) => prepareGroup(g));

// CoRE's calibrated blocks A' = A·sqrt(w_i w_j), as equilibrium() builds them.
const p = { ...DEFAULT_PARAMS };
const opt: ReplicatorOptions = { alpha: p.alpha, shift: shiftOf(p), eps: p.eps, tmax: p.tmax };
const problems = groups.map((g) => {
  const sqrtW = g.confidenceMissing === 0 ? confidenceWeights(g, p.tau).map(Math.sqrt) : null;
  const blocks: AffinityBlock[] = [];
  g.classes.forEach((c, k) => {
    const m = c.members.length;
    if (m < 2) return;
    const a = classAffinity(g.cosines[k], m, p.kappa);
    if (sqrtW) for (let r = 0; r < m; r++) for (let q = 0; q < m; q++) a[r * m + q] *= sqrtW[c.members[r]] * sqrtW[c.members[q]];
    blocks.push({ members: c.members, a });
  });
  return { n: g.n, blocks };
});
const cells = problems.map((q) => q.blocks.reduce((s, b) => s + b.a.length, 0));

// Agreement first (and warm-up): x within 1e-9, iteration counts.
let worst = 0;
let iterJs = 0;
let iterWasm = 0;
for (const q of problems) {
  const a = replicatorJs(q.n, q.blocks, opt);
  const b = replicatorWasm(q.n, q.blocks, opt)!;
  iterJs += a.iterations;
  iterWasm += b.iterations;
  for (let i = 0; i < q.n; i++) worst = Math.max(worst, Math.abs(a.x[i] - b.x[i]));
}

function time(f: () => void): number {
  const t = performance.now();
  f();
  return (performance.now() - t) / problems.length;
}
const best = { dynJs: Infinity, dynWasm: Infinity, coreJs: Infinity, coreWasm: Infinity };
for (let round = 0; round < ROUNDS; round++) {
  best.dynJs = Math.min(best.dynJs, time(() => problems.forEach((q) => replicatorJs(q.n, q.blocks, opt))));
  best.dynWasm = Math.min(best.dynWasm, time(() => problems.forEach((q) => replicatorWasm(q.n, q.blocks, opt))));
  setReplicatorWasmEnabled(false);
  best.coreJs = Math.min(best.coreJs, time(() => groups.forEach((g) => equilibrium('core', g, p))));
  setReplicatorWasmEnabled(true);
  best.coreWasm = Math.min(best.coreWasm, time(() => groups.forEach((g) => equilibrium('core', g, p))));
}

const ms = (v: number) => `${v.toFixed(4)} ms`;
console.log(`${problems.length} groups from ${file}; mean N ${(problems.reduce((s, q) => s + q.n, 0) / problems.length).toFixed(1)}, mean Σm² ${(cells.reduce((s, c) => s + c, 0) / cells.length).toFixed(0)}, mean iterations JS ${(iterJs / problems.length).toFixed(1)} / wasm ${(iterWasm / problems.length).toFixed(1)}; max |Δx| ${worst.toExponential(2)}`);
console.log(`best of ${ROUNDS} rounds, per group:`);
console.log(`  dynamics only   JS ${ms(best.dynJs)}   wasm ${ms(best.dynWasm)}   ${(best.dynJs / best.dynWasm).toFixed(2)}×`);
console.log(`  CoRE run        JS ${ms(best.coreJs)}   wasm ${ms(best.coreWasm)}   ${(best.coreJs / best.coreWasm).toFixed(2)}×`);
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
