// Change points in a per-step series (docs/health.md §2): a permutation-calibrated CUSUM test for
// a shift in the mean, applied by binary segmentation.
//
// For x_1..x_T the statistic is the largest standardised difference of means over split points k,
//   Z = max_k |mean(x_{k+1..T}) − mean(x_{1..k})| · sqrt(k (T − k) / T),
// (the weighted CUSUM |S_k − (k/T) S_T| · sqrt(T / (k (T − k))); the series' variance is the same
// under every permutation, so it needs no estimate). Its p-value is the share of seeded random
// permutations of the series whose Z is at least as large: under a stationary (exchangeable) series
// every ordering is equally likely, so the test's false-alarm rate is exactly α, whatever the
// distribution of the values. A split is accepted when p ≤ α and the change is at least the
// series' smallest relevant size; each side is then tested again (binary segmentation).

import { rng } from './health-random';

export interface ChangePoint {
  /** Index (into the series) of the first value of the new segment. */
  index: number;
  before: number;
  after: number;
  p: number;
}

export interface ChangePointOptions {
  /** Per-series significance level of each test. */
  alpha: number;
  /** Smallest |after − before| that is reported (a statistically clear but tiny shift is not). */
  minChange: number;
  /** Fewest values on each side of a change (and the fewest steps after a change before it can be seen). */
  minSegment?: number;
  permutations?: number;
  seed?: number;
  /** Most change points reported per series. */
  maxChanges?: number;
}

export const MIN_SEGMENT = 3;
export const PERMUTATIONS = 999;

function bestSplit(x: Float64Array, m: number): { k: number; z: number } {
  const T = x.length;
  let total = 0;
  for (let i = 0; i < T; i++) total += x[i];
  let s = 0;
  let best = -1;
  let bestZ = -1;
  for (let k = 1; k < T; k++) {
    s += x[k - 1];
    if (k < m || T - k < m) continue;
    const z = Math.abs(s - (k / T) * total) * Math.sqrt(T / (k * (T - k)));
    // Scores equal up to rounding keep the earlier split, so results do not depend on float noise.
    if (z > bestZ + 1e-12 * Math.max(1, bestZ)) {
      bestZ = z;
      best = k;
    }
  }
  return { k: best, z: bestZ };
}

function mean(x: Float64Array, a: number, b: number): number {
  let s = 0;
  for (let i = a; i < b; i++) s += x[i];
  return s / (b - a);
}

/** The p-value of the best split of `x` under random permutations (seeded). */
function permutationP(x: Float64Array, z: number, m: number, permutations: number, seed: number): number {
  const r = rng(seed);
  const y = Float64Array.from(x);
  let atLeast = 0;
  for (let p = 0; p < permutations; p++) {
    for (let i = y.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      const t = y[i];
      y[i] = y[j];
      y[j] = t;
    }
    if (bestSplit(y, m).z >= z * (1 - 1e-12)) atLeast++;
  }
  return (1 + atLeast) / (1 + permutations);
}

/** Change points of `series` in increasing order of index. */
export function changePoints(series: ArrayLike<number>, opts: ChangePointOptions): ChangePoint[] {
  const m = opts.minSegment ?? MIN_SEGMENT;
  const perms = opts.permutations ?? PERMUTATIONS;
  const maxChanges = opts.maxChanges ?? 3;
  const x = Float64Array.from(series);
  const out: ChangePoint[] = [];
  const segments: [number, number][] = [[0, x.length]];
  while (segments.length && out.length < maxChanges) {
    const [a, b] = segments.shift()!;
    if (b - a < 2 * m) continue;
    const seg = x.subarray(a, b);
    const { k, z } = bestSplit(seg, m);
    if (k < 0 || !(z > 0)) continue;
    const before = mean(seg, 0, k);
    const after = mean(seg, k, seg.length);
    if (Math.abs(after - before) < opts.minChange) continue;
    const p = permutationP(seg, z, m, perms, (opts.seed ?? 1) + a * 7919 + b);
    if (p > opts.alpha) continue;
    out.push({ index: a + k, before, after, p });
    segments.push([a, a + k], [a + k, b]);
  }
  return out.sort((u, v) => u.index - v.index);
}
