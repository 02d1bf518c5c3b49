// The voting operators: majority (TTRL, docs/contract.md#majority), CISC (docs/contract.md#cisc) and T3RL (docs/contract.md#t3rl). Each is a
// weighted vote over answer classes with binary rewards and gate 1; they differ in the weights.

import type { PreparedGroup } from '../prepare';
import { ciscTempOf, type Params } from '../params';
import { argmaxFirst, gateOneResult, type OperatorId, type OperatorResult } from './result';

/** label = the class with the largest weight sum (answered roll-outs only); R_i = 1 in it, else 0. */
export function weightedVote(op: OperatorId, g: PreparedGroup, weights: Float64Array, p: Params): OperatorResult {
  const scores = new Float64Array(g.classes.length);
  for (let i = 0; i < g.n; i++) if (g.classOf[i] >= 0) scores[g.classOf[i]] += weights[i];
  const labelClass = argmaxFirst(scores);
  const rewards = new Float64Array(g.n);
  if (labelClass >= 0) for (const i of g.classes[labelClass].members) rewards[i] = 1;
  return { ...gateOneResult(op, g, labelClass, rewards, scores, p), weights };
}

export function majority(g: PreparedGroup, p: Params): OperatorResult {
  const r = weightedVote('majority', g, new Float64Array(g.n).fill(1), p);
  delete r.weights;
  return r;
}

/** w_i = exp((c_i − max_j c_j)/T), a stable softmax numerator (Taubenfeld et al. 2025). */
export function confidenceWeights(g: PreparedGroup, temperature: number): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < g.n; i++) if (g.hasConfidence[i] && g.confidence[i] > max) max = g.confidence[i];
  const w = new Float64Array(g.n);
  for (let i = 0; i < g.n; i++) w[i] = g.hasConfidence[i] ? Math.exp((g.confidence[i] - max) / temperature) : 0;
  return w;
}

export function cisc(g: PreparedGroup, p: Params): OperatorResult {
  return weightedVote('cisc', g, confidenceWeights(g, ciscTempOf(p)), p);
}

/** w_i = 1 + (ω − 1)·v_i: verified roll-outs vote with weight ω (T3RL, docs/contract.md#t3rl). */
export function t3rl(g: PreparedGroup, p: Params): OperatorResult {
  const w = new Float64Array(g.n);
  for (let i = 0; i < g.n; i++) w[i] = 1 + (p.omega - 1) * (g.verified[i] === 1 ? 1 : 0);
  return weightedVote('t3rl', g, w, p);
}

/** Why T3RL cannot run on this group, or null: every answered roll-out needs a verdict or a tool output. */
export function t3rlUnavailable(g: PreparedGroup): string | null {
  // A group with no verification at all (e.g. no roll-out has an answer) would otherwise pass
  // vacuously and show T3RL on a run that logged none (docs/contract.md#t3rl).
  if (!g.verified.some((v) => v >= 0)) return 'no roll-out has a verification ("valid" or "tool_output" logged)';
  for (let i = 0; i < g.n; i++) {
    if (g.classOf[i] >= 0 && g.verified[i] < 0) return `roll-out ${i} has no verification (neither "valid" nor "tool_output" logged)`;
  }
  return null;
}

export function ciscUnavailable(g: PreparedGroup): string | null {
  if (g.n === 0) return 'empty group';
  return g.confidenceMissing > 0 ? `${g.confidenceMissing} of ${g.n} roll-outs have no mean_logprob/token_logprobs` : null;
}
