// Replicator dynamics on the CoRE payoff W' = A' − αI + C·eeᵀ (docs/contract.md#ec-and-core steps 4–5, paper eq. 3).
//
// A' is block-diagonal over answer classes (the answer kernel gates every edge), so W'x is
// computed block by block plus two O(N) terms, never as a dense N×N product:
//   (W'x)_i = (A'x)_i − α·x_i + C·Σ_j x_j.
//
// Two implementations of one iteration: `replicatorWasm`, the whole loop in one call to a
// WebAssembly kernel with 128-bit SIMD (replicator.wat; ~4× faster, bench/replicator-bench.ts),
// and `replicatorJs`, the reference and the fallback where WebAssembly or its SIMD is
// unavailable. They differ only in the order of floating-point sums: results agree to rounding,
// and where ‖x(t+1) − x(t)‖₂ falls on ε itself the iteration count can differ by one.
// `replicator` uses the kernel when it can.

import { replicatorWasmBytes } from './replicator-wasm';
import { instantiateKernel, WASM_PAGE, type WasmMemory } from '../wasm';

/** One answer class's calibrated affinities A' (dense m×m, zero diagonal) over its members. */
export interface AffinityBlock {
  members: readonly number[];
  /** Row-major m×m. */
  a: Float64Array;
}

/** Mass under which a class's block product is no longer computed (see `replicatorJs`). */
const LOST = 1e-15;

export interface ReplicatorOptions {
  alpha: number;
  /** C of Lemma 1; C ≥ α keeps W' non-negative. */
  shift: number;
  eps: number;
  tmax: number;
}

export interface ReplicatorResult {
  x: Float64Array;
  iterations: number;
}

/**
 * Runs x(t+1)_i = x(t)_i·(W'x(t))_i / (x(t)ᵀW'x(t)) from the barycenter e/N and stops after
 * computing x(t+1) when ‖x(t+1) − x(t)‖₂ < ε or t+1 = T_max (see `replicatorJs`): in the
 * WebAssembly kernel when this thread has one, else in JavaScript.
 */
export function replicator(n: number, blocks: readonly AffinityBlock[], opt: ReplicatorOptions): ReplicatorResult {
  return (wasmEnabled ? replicatorWasm(n, blocks, opt) : null) ?? replicatorJs(n, blocks, opt);
}

let wasmEnabled = true;

/** Lets `replicator` use the WebAssembly kernel on this thread (the default) or not (benchmarks, tests). */
export function setReplicatorWasmEnabled(enabled: boolean): void {
  wasmEnabled = enabled;
}

/**
 * Block order: each block's members are contiguous, so the inner products read x sequentially;
 * `order[k]` is the roll-out at position k. Roll-outs outside every block follow.
 */
function blockOrder(n: number, blocks: readonly AffinityBlock[]): { order: Int32Array; cells: number } {
  const order = new Int32Array(n);
  const inBlock = new Uint8Array(n);
  let k = 0;
  let cells = 0;
  for (const b of blocks) {
    for (const i of b.members) (order[k++] = i), (inBlock[i] = 1);
    cells += b.members.length * b.members.length;
  }
  for (let i = 0; i < n; i++) if (!inBlock[i]) order[k++] = i;
  return { order, cells };
}

/**
 * The JavaScript implementation (the reference; the fallback without WebAssembly SIMD).
 * Runs x(t+1)_i = x(t)_i·(W'x(t))_i / (x(t)ᵀW'x(t)) from the barycenter e/N and stops after
 * computing x(t+1) when ‖x(t+1) − x(t)‖₂ < ε or t+1 = T_max. Roll-outs in no block (no answer,
 * or a singleton class) only feel −α·x_i + C·Σx.
 * When x(t)ᵀW'x(t) ≤ 0 (N = 1 with C = α, or an all-zero payoff) the update is undefined: x stays
 * where it is, which the stopping rule then ends at once.
 */
export function replicatorJs(n: number, blocks: readonly AffinityBlock[], opt: ReplicatorOptions): ReplicatorResult {
  // Work in block order. All blocks are copied into one array so the hot loop touches typed
  // arrays only.
  const { order, cells } = blockOrder(n, blocks);
  const A = new Float64Array(cells);
  const size = new Int32Array(blocks.length);
  // A class whose total mass has fallen below LOST has lost the competition for good: its own
  // support (A'x on its members, of the order of its mass) is gone, so its growth factor stays
  // below 1 (eq. 9). Its block product is then skipped; what that changes in any output (its
  // members' mass and rewards, the gate, the stopping test) is of the order of LOST, nine orders
  // under the 1e-6 that two implementations are held to.
  const active = new Uint8Array(blocks.length).fill(1);
  let at = 0;
  blocks.forEach((b, j) => {
    A.set(b.a, at);
    at += b.a.length;
    size[j] = b.members.length;
  });

  let x = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  const wx = new Float64Array(n);
  const { alpha, shift, eps, tmax } = opt;
  let t = 0;
  let sum = 0; // Σx, kept from the update loop (the same sum, in the same order)
  for (let i = 0; i < n; i++) sum += x[i];
  while (t < tmax) {
    const c = shift * sum;
    for (let i = 0; i < n; i++) wx[i] = c - alpha * x[i];
    blockProduct(A, size, active, x, wx);
    let den = 0;
    for (let i = 0; i < n; i++) den += x[i] * wx[i];
    t++;
    if (!(den > 0)) break; // x(t+1) = x(t): the change is 0 < ε
    let diff = 0;
    sum = 0;
    for (let i = 0; i < n; i++) {
      const v = (x[i] * wx[i]) / den;
      const d = v - x[i];
      diff += d * d;
      sum += v;
      next[i] = v;
    }
    [x, next] = [next, x];
    if (Math.sqrt(diff) < eps) break;
    for (let j = 0, o = 0; j < size.length; o += size[j++]) {
      if (!active[j]) continue;
      let mass = 0;
      for (let q = o; q < o + size[j]; q++) mass += x[q];
      if (mass < LOST) active[j] = 0;
    }
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[order[i]] = x[i];
  return { x: out, iterations: t };
}

// The WebAssembly kernel: one module instance (and one linear memory) per thread, created on
// first use (see ../wasm.ts).
type RunKernel = (
  n: number, nb: number, pSize: number, pActive: number, pA: number, pX: number, pNext: number, pWx: number,
  alpha: number, shift: number, eps: number, tmax: number,
) => number;
interface Kernel {
  memory: WasmMemory;
  run: RunKernel;
}

/** undefined: not tried yet on this thread; null: unavailable (no WebAssembly, no SIMD, or it failed). */
let kernel: Kernel | null | undefined;

function loadKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  const exports = instantiateKernel(replicatorWasmBytes);
  kernel = exports && { memory: exports.memory as WasmMemory, run: exports.run as RunKernel };
  return kernel;
}

/** Whether this thread runs the replicator in WebAssembly (loads the kernel on first call). */
export function replicatorWasmAvailable(): boolean {
  return loadKernel() !== null;
}

const align16 = (bytes: number): number => Math.ceil(bytes / 16) * 16;

/**
 * The same dynamics as `replicatorJs` in the WebAssembly kernel (replicator.wat), the whole loop
 * in one call. Null when the kernel is unavailable on this thread, the problem does not fit in a
 * 32-bit memory, or a block's matrix is not m×m (the JS path then runs, as before).
 */
export function replicatorWasm(n: number, blocks: readonly AffinityBlock[], opt: ReplicatorOptions): ReplicatorResult | null {
  const k = loadKernel();
  if (!k) return null;
  for (const b of blocks) if (b.a.length !== b.members.length * b.members.length) return null;
  const { order, cells } = blockOrder(n, blocks);
  const nb = blocks.length;
  // Layout (bytes, 16-aligned): size[nb] i32 | active[nb] i32 | x[n] | next[n] | wx[n] | A (f64).
  const pSize = 0;
  const pActive = pSize + align16(4 * nb);
  const pX = pActive + align16(4 * nb);
  const pNext = pX + align16(8 * n);
  const pWx = pNext + align16(8 * n);
  const pA = pWx + align16(8 * n);
  const end = pA + 8 * cells;
  if (end > 2 ** 32) return null;
  const have = k.memory.buffer.byteLength;
  if (end > have) {
    try {
      k.memory.grow(Math.ceil((end - have) / WASM_PAGE));
    } catch {
      return null; // out of memory for the kernel: the JS path allocates its own arrays
    }
  }
  // Views after any grow (growing detaches the old buffer).
  const buffer = k.memory.buffer;
  const size = new Int32Array(buffer, pSize, nb);
  const f64 = new Float64Array(buffer, 0, end / 8);
  let at = pA / 8;
  blocks.forEach((b, j) => {
    size[j] = b.members.length;
    f64.set(b.a, at);
    at += b.a.length;
  });
  const iterations = k.run(n, nb, pSize, pActive, pA, pX, pNext, pWx, opt.alpha, opt.shift, opt.eps, opt.tmax);
  const out = new Float64Array(n);
  for (let i = 0, x = pX / 8; i < n; i++) out[order[i]] = f64[x + i];
  return { x: out, iterations };
}

/**
 * wx += A'x for the block-diagonal A' (blocks row-major, back to back). Four rows at a time: four
 * independent sums keep the floating-point adders busy (one running sum is bound by the add
 * latency) and each x value is loaded once for the four rows.
 */
function blockProduct(A: Float64Array, size: Int32Array, active: Uint8Array, x: Float64Array, wx: Float64Array): void {
  let o = 0;
  let base = 0;
  for (let j = 0; j < size.length; j++) {
    const m = size[j];
    if (!active[j]) {
      o += m;
      base += m * m;
      continue;
    }
    let p = 0;
    for (; p + 7 < m; p += 8) {
      const r0 = base + p * m;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
      for (let q = 0; q < m; q++) {
        const xq = x[o + q];
        const c = r0 + q;
        s0 += A[c] * xq;
        s1 += A[c + m] * xq;
        s2 += A[c + 2 * m] * xq;
        s3 += A[c + 3 * m] * xq;
        s4 += A[c + 4 * m] * xq;
        s5 += A[c + 5 * m] * xq;
        s6 += A[c + 6 * m] * xq;
        s7 += A[c + 7 * m] * xq;
      }
      wx[o + p] += s0;
      wx[o + p + 1] += s1;
      wx[o + p + 2] += s2;
      wx[o + p + 3] += s3;
      wx[o + p + 4] += s4;
      wx[o + p + 5] += s5;
      wx[o + p + 6] += s6;
      wx[o + p + 7] += s7;
    }
    for (; p + 3 < m; p += 4) {
      const r0 = base + p * m;
      const r1 = r0 + m;
      const r2 = r1 + m;
      const r3 = r2 + m;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let q = 0; q < m; q++) {
        const xq = x[o + q];
        s0 += A[r0 + q] * xq;
        s1 += A[r1 + q] * xq;
        s2 += A[r2 + q] * xq;
        s3 += A[r3 + q] * xq;
      }
      wx[o + p] += s0;
      wx[o + p + 1] += s1;
      wx[o + p + 2] += s2;
      wx[o + p + 3] += s3;
    }
    for (; p < m; p++) {
      const r0 = base + p * m;
      let s0 = 0;
      for (let q = 0; q < m; q++) s0 += A[r0 + q] * x[o + q];
      wx[o + p] += s0;
    }
    o += m;
    base += m * m;
  }
}
