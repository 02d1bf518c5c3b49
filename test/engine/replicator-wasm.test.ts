// The replicator's WebAssembly SIMD kernel (src/engine/dynamics/replicator.wat) against its
// JavaScript twin, and the generated module against the .wat it comes from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import {
  replicator,
  replicatorJs,
  replicatorWasm,
  replicatorWasmAvailable,
  setReplicatorWasmEnabled,
  type AffinityBlock,
  type ReplicatorOptions,
  type ReplicatorResult,
} from '../../src/engine/dynamics/replicator';
import { rng } from '../../scripts/synth';
// @ts-expect-error: a plain .mjs script without declarations
import { compileWat, renderModule, MODULE } from '../../scripts/build-wasm.mjs';

test('the committed replicator-wasm.ts is what replicator.wat compiles to (run node scripts/build-wasm.mjs)', async () => {
  const bytes: Uint8Array = await compileWat();
  assert.equal(readFileSync(MODULE, 'utf8'), renderModule(bytes));
});

test('the kernel loads on this Node (WebAssembly with 128-bit SIMD)', () => {
  assert.equal(replicatorWasmAvailable(), true);
});

/** Random symmetric affinities in [0, 1) with a zero diagonal, optionally calibrated by sqrt(w_i w_j). */
function randomBlock(r: () => number, members: number[], sqrtW: Float64Array | null, zero = false): AffinityBlock {
  const m = members.length;
  const a = new Float64Array(m * m);
  if (!zero) {
    for (let p = 0; p < m; p++) {
      for (let q = p + 1; q < m; q++) {
        let v = r();
        if (sqrtW) v *= sqrtW[members[p]] * sqrtW[members[q]];
        a[p * m + q] = v;
        a[q * m + p] = v;
      }
    }
  }
  return { members, a };
}

interface Problem {
  n: number;
  blocks: AffinityBlock[];
  opt: ReplicatorOptions;
  what: string;
}

/** Roll-outs shuffled into blocks of the given sizes (the rest in no block). */
function problem(r: () => number, n: number, sizes: number[], opt: ReplicatorOptions, what: string, o: { confidence?: boolean; zero?: boolean } = {}): Problem {
  const perm = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  let sqrtW: Float64Array | null = null;
  if (o.confidence) {
    // w_i = exp((c_i − max c)/τ) (eq. 2) for mean log-probs c_i in (−1.5, 0).
    const c = Array.from({ length: n }, () => -1.5 * r());
    const max = Math.max(...c);
    const tau = [0.05, 0.25, 1, 2][Math.floor(r() * 4)];
    sqrtW = Float64Array.from(c, (ci) => Math.sqrt(Math.exp((ci - max) / tau)));
  }
  const blocks: AffinityBlock[] = [];
  let k = 0;
  for (const m of sizes) {
    blocks.push(randomBlock(r, perm.slice(k, k + m), sqrtW, o.zero));
    k += m;
  }
  return { n, blocks, opt, what };
}

const maxDiff = (a: Float64Array, b: Float64Array) => a.reduce((w, v, i) => Math.max(w, Math.abs(v - b[i])), 0);
/** The JS path's x after exactly `k` steps (no ε stop; den ≤ 0 still stops it). */
const jsAt = (p: Problem, k: number): ReplicatorResult => replicatorJs(p.n, p.blocks, { ...p.opt, eps: 0, tmax: k });
/** ‖x(k) − x(k−1)‖₂ on the JS path. */
function stepAt(p: Problem, k: number): number {
  const a = jsAt(p, k).x;
  const b = jsAt(p, k - 1).x;
  return Math.hypot(...Array.from(a, (v, i) => v - b[i]));
}

function problems(): Problem[] {
  const r = rng(20261129);
  const out: Problem[] = [];
  const defaults: ReplicatorOptions = { alpha: 0.1, shift: 0.1, eps: 1e-6, tmax: 200 };
  // Every class size 1..70 alone, with a few roll-outs outside it, with and without confidence.
  for (let m = 1; m <= 70; m++) {
    out.push(problem(r, m + (m % 3), [m], defaults, `one class of ${m}`, { confidence: m % 2 === 0 }));
  }
  // Random partitions of N = 1..140 into classes (odd and even sizes), random α, C, ε, T_max.
  for (let k = 0; k < 300; k++) {
    const n = 1 + Math.floor(r() * (k < 150 ? 70 : 140));
    const sizes: number[] = [];
    let left = n;
    while (left > 0 && r() < 0.85) {
      const m = Math.min(left, 1 + Math.floor(r() * 70));
      sizes.push(m);
      left -= m;
    }
    const alpha = [0, 0.05, 0.1, 0.3, 1][Math.floor(r() * 5)];
    const shift = alpha + [0, 0, 0.1, 0.5, 2][Math.floor(r() * 5)];
    const eps = [1e-6, 1e-6, 1e-3, 1e-9, 1e-12][Math.floor(r() * 5)];
    const tmax = [200, 200, 1, 2, 7, 1000][Math.floor(r() * 6)];
    out.push(problem(r, n, sizes, { alpha, shift, eps, tmax }, `random #${k}`, { confidence: r() < 0.6 }));
  }
  // Degenerate: N = 1 (no block, or a block of one), all-zero payoffs, C < α, no block at all.
  out.push(problem(r, 1, [], defaults, 'N = 1'));
  out.push(problem(r, 1, [1], defaults, 'N = 1 in a block of one'));
  out.push(problem(r, 1, [], { ...defaults, shift: 0.5 }, 'N = 1, C > α'));
  for (const n of [2, 5, 64]) {
    out.push(problem(r, n, [n], defaults, `all-zero payoff, N = ${n}`, { zero: true }));
    out.push(problem(r, n, [n], { ...defaults, alpha: 0, shift: 0 }, `all-zero payoff and α = C = 0, N = ${n}`, { zero: true }));
    out.push(problem(r, n, [n], { ...defaults, alpha: 0.3, shift: 0 }, `C = 0 < α, N = ${n}`, { zero: true }));
    out.push(problem(r, n, [], defaults, `no block, N = ${n}`));
  }
  // ε on the boundary: ε = ‖x(k) − x(k−1)‖₂ of the JS path itself, where the two paths' rounding
  // decides whether the run stops at step k or k + 1.
  for (let k = 0; k < 12; k++) {
    const n = 20 + Math.floor(r() * 50);
    const p = problem(r, n, [Math.floor(n / 2), Math.floor(n / 3), 1], defaults, `ε on the boundary #${k}`, { confidence: k % 2 === 0 });
    const at = 5 + Math.floor(r() * 40);
    p.opt = { ...p.opt, eps: stepAt(p, at) };
    if (p.opt.eps > 0) out.push(p);
  }
  // Larger than the kernel's first memory page (one 300 × 300 block: 720 KB), then small again.
  out.push(problem(r, 330, [300, 17], defaults, 'N = 330 (memory grows)', { confidence: true }));
  out.push(problem(r, 9, [4, 3], defaults, 'small after large'));
  return out;
}


test('the WebAssembly kernel agrees with the JS path (x within 1e-9; iterations equal, or ±1 on an ε boundary)', () => {
  let boundary = 0;
  for (const p of problems()) {
    const js = replicatorJs(p.n, p.blocks, p.opt);
    const wasm = replicatorWasm(p.n, p.blocks, p.opt);
    assert.ok(wasm, `${p.what}: the kernel ran`);
    assert.equal(wasm.x.length, p.n);
    if (wasm.iterations === js.iterations) {
      const d = maxDiff(js.x, wasm.x);
      assert.ok(d <= 1e-9, `${p.what}: max |Δx| ${d}`);
      continue;
    }
    // Only where ‖x(k) − x(k−1)‖₂ sits on ε itself (k: the earlier stop) may one stop a step later.
    assert.equal(Math.abs(wasm.iterations - js.iterations), 1, `${p.what}: iterations ${wasm.iterations} vs ${js.iterations}`);
    const step = stepAt(p, Math.min(wasm.iterations, js.iterations));
    assert.ok(Math.abs(step - p.opt.eps) <= 1e-9 * p.opt.eps, `${p.what}: iterations ${wasm.iterations} vs ${js.iterations} with ‖Δx‖ ${step} against ε ${p.opt.eps}`);
    const d = maxDiff(jsAt(p, wasm.iterations).x, wasm.x);
    assert.ok(d <= 1e-9, `${p.what}: max |Δx| ${d} against the JS path at ${wasm.iterations} steps`);
    if (!p.what.startsWith('ε on the boundary')) boundary++;
  }
  assert.ok(boundary <= 2, `${boundary} ε-boundary cases besides the deliberate ones`);
});

test('degenerate runs end after one step at the barycenter', () => {
  for (const p of problems().filter((q) => /N = 1|all-zero|C = 0/.test(q.what))) {
    const wasm = replicatorWasm(p.n, p.blocks, p.opt)!;
    assert.equal(wasm.iterations, 1, p.what);
    // Exactly there when x'W'x ≤ 0 (x stays); to rounding when the step is x·(W'x)/den ≈ x.
    for (const v of wasm.x) assert.ok(Math.abs(v - 1 / p.n) <= 1e-15, `${p.what}: ${v}`);
    if (p.n === 1 || p.opt.shift === 0) for (const v of wasm.x) assert.equal(v, 1 / p.n, p.what);
  }
});

test('replicator runs the kernel by default and the JS path when it is switched off', () => {
  const p = problems()[200];
  assert.deepEqual(replicator(p.n, p.blocks, p.opt), replicatorWasm(p.n, p.blocks, p.opt));
  setReplicatorWasmEnabled(false);
  try {
    assert.deepEqual(replicator(p.n, p.blocks, p.opt), replicatorJs(p.n, p.blocks, p.opt));
  } finally {
    setReplicatorWasmEnabled(true);
  }
});

test('a block whose matrix is not m × m is left to the JS path', () => {
  assert.equal(replicatorWasm(3, [{ members: [0, 1], a: new Float64Array(3) }], { alpha: 0.1, shift: 0.1, eps: 1e-6, tmax: 200 }), null);
});

test('without WebAssembly (node --jitless) replicator falls back to the JS path', () => {
  const code = `
    const { replicator, replicatorJs, replicatorWasmAvailable } = require('./src/engine/dynamics/replicator.ts');
    const { deepStrictEqual, equal } = require('node:assert/strict');
    equal(typeof WebAssembly, 'undefined');
    equal(replicatorWasmAvailable(), false);
    const blocks = [{ members: [0, 2, 3], a: Float64Array.from([0, 0.5, 0.2, 0.5, 0, 0.9, 0.2, 0.9, 0]) }];
    const opt = { alpha: 0.1, shift: 0.1, eps: 1e-6, tmax: 200 };
    deepStrictEqual(replicator(5, blocks, opt), replicatorJs(5, blocks, opt));
    console.log('ok');
  `;
  const r = spawnSync(process.execPath, ['--jitless', '--no-warnings', '--import', 'tsx', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
});
