// Replicator dynamics on the CoRE payoff W' = A' − αI + C·eeᵀ (SPEC §4.3 steps 4–5, paper eq. 3).
//
// A' is block-diagonal over answer classes (the answer kernel gates every edge), so W'x is
// computed block by block plus two O(N) terms, never as a dense N×N product:
//   (W'x)_i = (A'x)_i − α·x_i + C·Σ_j x_j.

/** One answer class's calibrated affinities A' (dense m×m, zero diagonal) over its members. */
export interface AffinityBlock {
  members: readonly number[];
  /** Row-major m×m. */
  a: Float64Array;
}

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
  /** x*ᵀ W' x* at the last step (the shifted objective). */
  objective: number;
}

/**
 * Runs x(t+1)_i = x(t)_i·(W'x(t))_i / (x(t)ᵀW'x(t)) from the barycenter e/N and stops after
 * computing x(t+1) when ‖x(t+1) − x(t)‖₂ < ε or t+1 = T_max. Roll-outs in no block (no answer,
 * or a singleton class) only feel −α·x_i + C·Σx.
 * When x(t)ᵀW'x(t) ≤ 0 (N = 1 with C = α, or an all-zero payoff) the update is undefined: x stays
 * where it is, which the stopping rule then ends at once.
 */
export function replicator(n: number, blocks: readonly AffinityBlock[], opt: ReplicatorOptions): ReplicatorResult {
  // Work in block order: each block's members are contiguous, so the inner product reads x
  // sequentially; `order[k]` is the roll-out at position k. Roll-outs outside every block follow.
  const order = new Int32Array(n);
  const inBlock = new Uint8Array(n);
  let k = 0;
  for (const b of blocks) for (const i of b.members) (order[k++] = i), (inBlock[i] = 1);
  for (let i = 0; i < n; i++) if (!inBlock[i]) order[k++] = i;

  let x = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  const wx = new Float64Array(n);
  const { alpha, shift, eps, tmax } = opt;
  let objective = 0;
  let t = 0;
  while (t < tmax) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += x[i];
    const c = shift * sum;
    for (let i = 0; i < n; i++) wx[i] = c - alpha * x[i];
    let o = 0;
    for (const { members, a } of blocks) {
      const m = members.length;
      for (let p = 0; p < m; p++) {
        let s = 0;
        const row = p * m;
        for (let q = 0; q < m; q++) s += a[row + q] * x[o + q];
        wx[o + p] += s;
      }
      o += m;
    }
    let den = 0;
    for (let i = 0; i < n; i++) den += x[i] * wx[i];
    objective = den;
    t++;
    if (!(den > 0)) break; // x(t+1) = x(t): the change is 0 < ε
    let diff = 0;
    for (let i = 0; i < n; i++) {
      const v = (x[i] * wx[i]) / den;
      const d = v - x[i];
      diff += d * d;
      next[i] = v;
    }
    [x, next] = [next, x];
    if (Math.sqrt(diff) < eps) break;
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[order[i]] = x[i];
  return { x: out, iterations: t, objective };
}
