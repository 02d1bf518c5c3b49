// EMPO's math reward (docs/contract.md#empo): a roll-out earns the share of the group its answer's
// semantic cluster holds, provided the group's semantic entropy is below log N; a roll-out without
// an answer earns 0. The clusters are the project's answer classes (docs/contract.md#answers) in
// place of EMPO's math-verify clustering; as there, every roll-out without an answer is a cluster
// of its own (math-verify does not equate two empty predictions).

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import { gateOneResult, type OperatorResult } from './result';
import { logCorrectlyRounded, numpySum } from './numpy-float';

export interface EmpoClusters {
  /** Cluster of each roll-out, numbered by first appearance. */
  clusterOf: Int32Array;
  /** Members per cluster. */
  counts: number[];
  /** Whether the roll-out has an answer (an empty answer is none). */
  answered: boolean[];
}

/** EMPO's clusters over the group: the answer classes, and one cluster per unanswered roll-out. */
export function empoClusters(g: PreparedGroup): EmpoClusters {
  const clusterOf = new Int32Array(g.n);
  const counts: number[] = [];
  const answered: boolean[] = [];
  const idOfClass = new Map<number, number>();
  for (let i = 0; i < g.n; i++) {
    const c = g.classOf[i];
    const has = c >= 0 && g.answers[i] !== null && g.answers[i] !== '';
    answered.push(has);
    let id = has ? idOfClass.get(c) : undefined;
    if (id === undefined) {
      id = counts.length;
      counts.push(0);
      if (has) idOfClass.set(c, id);
    }
    clusterOf[i] = id;
    counts[id]++;
  }
  return { clusterOf, counts, answered };
}

/** The semantic entropy −Σ p log p of the cluster shares, rounded as the authors' NumPy code rounds it. */
export function semanticEntropy(counts: readonly number[], n: number): number {
  const terms = new Float64Array(counts.length);
  // p log p per distinct cluster size: the correctly rounded log is costly and sizes repeat.
  const bySize = new Map<number, number>();
  for (let k = 0; k < counts.length; k++) {
    let t = bySize.get(counts[k]);
    if (t === undefined) {
      const p = counts[k] / n;
      bySize.set(counts[k], (t = p * logCorrectlyRounded(p)));
    }
    terms[k] = t;
  }
  return -numpySum(terms);
}

export function empo(g: PreparedGroup, p: Params): OperatorResult {
  const { clusterOf, counts, answered } = empoClusters(g);
  const entropy = semanticEntropy(counts, g.n);
  // The gate: H < log N, i.e. not every roll-out in a cluster of its own (float-exact as the authors').
  const open = entropy < logCorrectlyRounded(g.n);
  const rewards = new Float64Array(g.n);
  if (open) for (let i = 0; i < g.n; i++) if (answered[i]) rewards[i] = counts[clusterOf[i]] / g.n;
  // The class with the largest share is the soft vote's label; none when the gate is shut.
  const classScores = new Float64Array(g.classes.length);
  for (let i = 0; i < g.n; i++) if (answered[i]) classScores[g.classOf[i]] = counts[clusterOf[i]] / g.n;
  let labelClass = -1;
  if (open) for (let k = 0; k < classScores.length; k++) if (classScores[k] > 0 && (labelClass < 0 || classScores[k] > classScores[labelClass])) labelClass = k;
  const r = gateOneResult('empo', g, labelClass, rewards, classScores, p);
  r.semanticEntropy = entropy;
  return r;
}
