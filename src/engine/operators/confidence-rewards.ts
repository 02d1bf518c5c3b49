// The confidence family (docs/contract.md#confidence-operators): each roll-out's reward is the
// model's own certainty about it, whatever the other roll-outs answer; the trainer uses the
// group-normalised GRPO advantage of these rewards.
// - selfcertainty (INTUITOR): R_i = the roll-out's self-certainty, the mean over its tokens of
//   logsumexp(z) − mean(z) of the full-vocabulary logits z (KL(uniform ‖ π) + log V).
// - entropy (RENT): R_i = −(mean token entropy over the response's token window).
// - likelihood: R_i = the mean token log-prob of the sampled tokens.
// Values the log marks as computed from sampled-token log-probs (`confidenceApproximate`), and
// RENT's entropy estimated from the mean log-prob, are approximations: the result says so.

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import { argmaxFirst, gateOneResult, type OperatorId, type OperatorResult } from './result';

/** Why a value cannot be a reward: null when it is a finite number. */
function badValue(v: number | null | undefined): string | null {
  if (v === null || v === undefined) return 'not logged';
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+∞' : '−∞';
  return null;
}

/** The first roll-out whose value is not a finite number, as a sentence, or null. */
function firstBad(g: PreparedGroup, values: readonly (number | null | undefined)[] | undefined, field: string, hint: string): string | null {
  for (let i = 0; i < g.n; i++) {
    const why = badValue(values?.[i]);
    if (why === 'not logged') return `roll-out ${i} has no ${field} (${hint})`;
    if (why) return `roll-out ${i}'s ${field} is ${why}: refused`;
  }
  return null;
}

const SELF_CERTAINTY_HINT = 'log it from the model’s logits: docs/contract.md#self-certainty';
const ENTROPY_HINT = 'log "entropy" or "token_entropies" from the model’s logits, or "mean_logprob"/"token_logprobs" for the sampled-token estimate';

/** The label a confidence operator reports: the answer class of its highest-reward answered roll-out. */
function confidenceResult(op: OperatorId, g: PreparedGroup, rewards: Float64Array, p: Params, approximation?: string): OperatorResult {
  const classScores = new Float64Array(g.classes.length).fill(-Infinity);
  for (let i = 0; i < g.n; i++) {
    const c = g.classOf[i];
    if (c >= 0 && rewards[i] > classScores[c]) classScores[c] = rewards[i];
  }
  const r = gateOneResult(op, g, argmaxFirst(classScores), rewards, classScores, p);
  if (approximation) r.approximation = approximation;
  return r;
}

const approximateIn = (g: PreparedGroup): boolean => g.confidenceApproximate?.some(Boolean) ?? false;
const SAMPLED = 'computed from the sampled tokens’ log-probs, not the full-vocabulary logits (the log says so)';

export function selfCertaintyUnavailable(g: PreparedGroup): string | null {
  return firstBad(g, g.selfCertainty, 'self_certainty', SELF_CERTAINTY_HINT);
}

export function selfCertainty(g: PreparedGroup, p: Params): OperatorResult {
  const why = selfCertaintyUnavailable(g);
  if (why) throw new RangeError(`selfcertainty: ${why}`);
  const rewards = Float64Array.from(g.selfCertainty!, (v) => v as number);
  return confidenceResult('selfcertainty', g, rewards, p, approximateIn(g) ? `self-certainty ${SAMPLED}` : undefined);
}

/** Where each roll-out's mean token entropy comes from, or why it cannot be had. */
type EntropySource = { kind: 'tokens' | 'mean' | 'logprob' } | { kind: 'none'; why: string };

function entropySource(g: PreparedGroup, i: number, window: number): EntropySource {
  const tokens = g.tokenEntropies?.[i];
  if (tokens && tokens.length > 0) {
    for (let t = 0; t < tokens.length; t++) {
      const why = badValue(tokens[t]);
      if (why) return { kind: 'none', why: `roll-out ${i}'s token_entropies[${t}] is ${why === 'not logged' ? 'not a number' : why}: refused` };
    }
    return { kind: 'tokens' };
  }
  if (window > 0) return { kind: 'none', why: `roll-out ${i} has no token_entropies (the token window of ${window} needs them)` };
  const mean = g.entropy?.[i];
  if (mean !== null && mean !== undefined) {
    const why = badValue(mean);
    return why ? { kind: 'none', why: `roll-out ${i}'s entropy is ${why}: refused` } : { kind: 'mean' };
  }
  if (g.nonFiniteLogprob?.includes(i)) return { kind: 'none', why: `roll-out ${i}'s mean log-prob is not finite: refused` };
  if (g.hasConfidence[i]) return { kind: 'logprob' };
  return { kind: 'none', why: `roll-out ${i} has no entropy (${ENTROPY_HINT})` };
}

export function entropyUnavailable(g: PreparedGroup, p?: Params): string | null {
  const window = p?.entropyWindow ?? 0;
  for (let i = 0; i < g.n; i++) {
    const s = entropySource(g, i, window);
    if (s.kind === 'none') return s.why;
  }
  return null;
}

/** The mean of the last `window` values (all of them when window is 0 or exceeds their number). */
function windowMean(values: readonly number[], window: number): number {
  const from = window > 0 && window < values.length ? values.length - window : 0;
  let s = 0;
  for (let t = from; t < values.length; t++) s += values[t];
  return s / (values.length - from);
}

export function tokenEntropy(g: PreparedGroup, p: Params): OperatorResult {
  const why = entropyUnavailable(g, p);
  if (why) throw new RangeError(`entropy: ${why}`);
  const rewards = new Float64Array(g.n);
  let estimated = 0;
  for (let i = 0; i < g.n; i++) {
    const s = entropySource(g, i, p.entropyWindow);
    if (s.kind === 'tokens') rewards[i] = -windowMean(g.tokenEntropies![i]!, p.entropyWindow);
    else if (s.kind === 'mean') rewards[i] = -(g.entropy![i] as number);
    else {
      // −mean log π(y_t) is the sampled-token (Monte Carlo) estimate of the mean token entropy.
      rewards[i] = g.confidence[i];
      estimated++;
    }
  }
  const notes: string[] = [];
  if (estimated) notes.push(`${estimated} of ${g.n} roll-outs' entropy estimated as −(mean sampled-token log-prob), not computed from the logits`);
  if (approximateIn(g)) notes.push(`token entropy ${SAMPLED}`);
  return confidenceResult('entropy', g, rewards, p, notes.length ? notes.join('; ') : undefined);
}

export function likelihoodUnavailable(g: PreparedGroup): string | null {
  for (let i = 0; i < g.n; i++) {
    if (g.nonFiniteLogprob?.includes(i)) return `roll-out ${i}'s mean log-prob is not finite: refused`;
    if (!g.hasConfidence[i]) return `roll-out ${i} has no mean_logprob/token_logprobs`;
  }
  return null;
}

export function likelihood(g: PreparedGroup, p: Params): OperatorResult {
  const why = likelihoodUnavailable(g);
  if (why) throw new RangeError(`likelihood: ${why}`);
  return confidenceResult('likelihood', g, Float64Array.from(g.confidence), p);
}
