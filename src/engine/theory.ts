// Theory read-outs per group (docs/contract.md#theory-read-outs; CoRE paper Props. 2–3 and §6): the regime, and how far
// the runner-up class is from overturning the plurality.

import type { PreparedGroup } from './prepare';
import type { Params } from './params';
import { confidenceWeights } from './operators/vote';
import { argmaxFirst } from './argmax';

export type Regime = 'saturated' | 'contested' | 'competence-floor';

export interface ClassSummary {
  /** Index into PreparedGroup.classes. */
  class: number;
  answer: string;
  size: number;
  /** Mean within-class off-diagonal affinity of A (null for a class of one: no pairs). */
  coherence: number | null;
  /** w̄ = (mean_i sqrt(w_i))², 1 without confidence (Prop. 3). */
  confidence: number;
}

export interface TheoryReadout {
  regime: Regime;
  /** Size of the largest class over N. */
  majorityRatio: number;
  plurality: ClassSummary | null;
  runnerUp: ClassSummary | null;
  /** m / n*: how much the plurality outnumbers the runner-up (Fig. 4's x axis). */
  outnumbering: number | null;
  /** c* / c_w: the runner-up's coherence advantage (Fig. 4's y axis). */
  coherenceAdvantage: number | null;
  /** (m−1)/(n*−1): the bar on c* / c_w with the vote's start and no confidence (eq. 5). */
  voteBar: number | null;
  /** (w̄_w/w̄_*)·(m−1)/(n*−1): the bar lowered (or raised) by confidence (eq. 7). */
  confidenceBar: number | null;
  /** c* must exceed this: confidenceBar·c_w. */
  threshold: number | null;
  /** c* − threshold: positive means the runner-up is in the recovery region. */
  margin: number | null;
}

export function classCoherence(g: PreparedGroup, k: number, kappa: number): number | null {
  const cos = g.cosines[k];
  if (!cos || cos.length === 0) return null;
  let s = 0;
  for (let t = 0; t < cos.length; t++) s += cos[t];
  return kappa + ((1 - kappa) * (1 + s / cos.length)) / 2;
}

export function regimeOf(topSize: number, n: number): Regime {
  if (n > 0 && topSize >= 0.9 * n) return 'saturated';
  if (topSize < 0.25 * n || n === 0) return 'competence-floor';
  return 'contested';
}

export function theoryReadout(g: PreparedGroup, p: Params): TheoryReadout {
  const sizes = Float64Array.from(g.classes, (c) => c.members.length);
  const top = argmaxFirst(sizes);
  const second = top >= 0 ? argmaxFirst(sizes, (k) => k !== top) : -1;
  const sqrtW = g.confidenceMissing === 0 && g.n > 0 ? confidenceWeights(g, p.tau).map(Math.sqrt) : null;
  const summary = (k: number): ClassSummary | null => {
    if (k < 0) return null;
    const members = g.classes[k].members;
    let mean = 1;
    if (sqrtW) {
      mean = 0;
      for (const i of members) mean += sqrtW[i];
      mean /= members.length;
    }
    return { class: k, answer: g.classes[k].answer, size: members.length, coherence: classCoherence(g, k, p.kappa), confidence: mean * mean };
  };
  const plurality = summary(top);
  const runnerUp = summary(second);
  const out: TheoryReadout = {
    regime: regimeOf(plurality?.size ?? 0, g.n),
    majorityRatio: g.n > 0 ? (plurality?.size ?? 0) / g.n : 0,
    plurality,
    runnerUp,
    outnumbering: null,
    coherenceAdvantage: null,
    voteBar: null,
    confidenceBar: null,
    threshold: null,
    margin: null,
  };
  if (!plurality || !runnerUp) return out;
  const m = plurality.size;
  const ns = runnerUp.size;
  out.outnumbering = m / ns;
  if (plurality.coherence !== null && runnerUp.coherence !== null) out.coherenceAdvantage = runnerUp.coherence / plurality.coherence;
  // A runner-up of one roll-out has no internal support: no coherence can recover it (Lemma 3).
  if (ns < 2 || plurality.coherence === null || runnerUp.coherence === null || runnerUp.confidence <= 0) return out;
  out.voteBar = (m - 1) / (ns - 1);
  out.confidenceBar = (plurality.confidence / runnerUp.confidence) * out.voteBar;
  out.threshold = out.confidenceBar * plurality.coherence;
  out.margin = runnerUp.coherence - out.threshold;
  return out;
}
