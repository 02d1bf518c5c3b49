// EC and CoRE (docs/contract.md#ec-and-core; CoRE paper §3.2): dominant sets of the roll-out graph by replicator
// dynamics, read out as a pseudo-label, graded rewards and a cohesiveness gate.

import type { PreparedGroup } from '../prepare';
import { shiftOf, type Params } from '../params';
import { replicator, type AffinityBlock } from '../dynamics/replicator';
import { grpoAdvantages } from '../grpo';
import { confidenceWeights } from './vote';
import { argmaxFirst, type OperatorId, type OperatorResult } from './result';

/**
 * The uncalibrated affinities A of one class (eq. 1): A_ij = κ + (1−κ)·K_rsn(i,j) with
 * K_rsn = (1 + cos)/2, A_ii = 0; K_ans = 1 inside a class and 0 across, so A is block-diagonal.
 */
export function classAffinity(cos: Float64Array, m: number, kappa: number): Float64Array {
  const a = new Float64Array(m * m);
  for (let p = 0; p < m; p++) {
    // cos is packed row by row over the upper triangle: (p, q) is at base + q, as
    // pairIndex in features/tfidf.ts numbers it.
    const base = p * m - (p * (p + 1)) / 2 - p - 1;
    for (let q = p + 1; q < m; q++) {
      const v = kappa + ((1 - kappa) * (1 + cos[base + q])) / 2;
      a[p * m + q] = v;
      a[q * m + p] = v;
    }
  }
  return a;
}

/** Runs EC (w ≡ 1) or CoRE (w_i = exp((c_i − max c)/τ), eq. 2) on a prepared group. */
export function equilibrium(op: Extract<OperatorId, 'ec' | 'core'>, g: PreparedGroup, p: Params): OperatorResult {
  if (!g.hasReasoning) throw new Error(`${op} needs reasoning vectors: prepare the group with reasoning (the default)`);
  const n = g.n;
  const calibrate = op === 'core' && g.confidenceMissing === 0 && n > 0;
  const w = calibrate ? confidenceWeights(g, p.tau) : null;
  const sqrtW = w ? w.map(Math.sqrt) : null;

  // Blocks of A (for the read-outs) and A' = A·sqrt(w_i w_j) (for the dynamics). Classes of one
  // roll-out have no edge and need no block.
  const plain: AffinityBlock[] = [];
  const calibrated: AffinityBlock[] = [];
  g.classes.forEach((c, k) => {
    const m = c.members.length;
    if (m < 2) return;
    const a = classAffinity(g.cosines[k], m, p.kappa);
    plain.push({ members: c.members, a });
    if (!sqrtW) return;
    const ac = new Float64Array(m * m);
    for (let r = 0; r < m; r++) {
      const sr = sqrtW[c.members[r]];
      for (let q = 0; q < m; q++) ac[r * m + q] = a[r * m + q] * sr * sqrtW[c.members[q]];
    }
    calibrated.push({ members: c.members, a: ac });
  });

  // Eq. 3 on W' = A' − αI + C·eeᵀ from the barycenter.
  const { x, iterations } = n > 0 ? replicator(n, sqrtW ? calibrated : plain, { alpha: p.alpha, shift: shiftOf(p), eps: p.eps, tmax: p.tmax }) : { x: new Float64Array(0), iterations: 0 };

  // Eq. 4 read-outs with the uncalibrated A: y* = argmax class mass, R_i = (Ax*)_i / max (Ax*), w_q = x*ᵀAx*.
  const mass = new Float64Array(g.classes.length);
  for (let i = 0; i < n; i++) if (g.classOf[i] >= 0) mass[g.classOf[i]] += x[i];
  const labelClass = argmaxFirst(mass);
  const ax = new Float64Array(n);
  for (const { members, a } of plain) {
    const m = members.length;
    for (let r = 0; r < m; r++) {
      let s = 0;
      for (let q = 0; q < m; q++) s += a[r * m + q] * x[members[q]];
      ax[members[r]] = s;
    }
  }
  let max = 0;
  let gate = 0;
  for (let i = 0; i < n; i++) {
    if (ax[i] > max) max = ax[i];
    gate += x[i] * ax[i];
  }
  const rewards = new Float64Array(n);
  if (max > 0) for (let i = 0; i < n; i++) rewards[i] = ax[i] / max;

  const rho = 1 / (10 * n);
  const support: number[] = [];
  for (let i = 0; i < n; i++) if (x[i] > rho) support.push(i);

  const result: OperatorResult = {
    operator: op,
    label: labelClass >= 0 ? g.classes[labelClass].answer : null,
    labelClass,
    rewards,
    gate,
    advantages: grpoAdvantages(rewards, p.advEps, p.advScale),
    lossWeight: gate,
    classScores: mass,
    mass: x,
    support,
    iterations,
  };
  if (op === 'core') {
    result.confidence = calibrate ? 'used' : 'missing';
    if (w) result.weights = w;
  }
  return result;
}
