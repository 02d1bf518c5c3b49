// EVOL-RL's novelty-weighted vote (docs/contract.md#novelty): the majority vote (TTRL) decides
// which roll-outs are right; within the right ones rewards spread over [0.5, 1] and within the
// wrong ones over [−1, −0.5] by semantic novelty (1 − the mean of the roll-out's mean similarity to
// its own side and its largest similarity to anyone); a roll-out without a \boxed{…} holding a
// digit gets −1. EVOL-RL measures similarity with an embedding model; here it is the project's
// TF-IDF cosine of the text after `</think>` (the substitution is stated on every result).

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import { grpoAdvantages } from '../grpo';
import { weightedVote } from './vote';
import type { OperatorResult } from './result';

export const NOVELTY_SIMILARITY_NOTE = 'semantic similarity is the TF-IDF cosine of the text after </think>, in place of EVOL-RL’s embedding model';

export function noveltyUnavailable(g: PreparedGroup): string | null {
  return g.novelty ? null : 'needs the roll-out texts (prepared without them)';
}

/** Rescales one side's novelty into [low, low + 0.5] as EVOL-RL does (its singleton and tie cases included). */
function sideRewards(side: readonly number[], novelty: Float64Array, rewards: Float64Array, low: number, single: number): void {
  if (side.length === 0) return;
  if (side.length === 1) {
    novelty[side[0]] = 0.5;
    rewards[side[0]] = single;
    return;
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const i of side) {
    lo = Math.min(lo, novelty[i]);
    hi = Math.max(hi, novelty[i]);
  }
  // First the normalisation to [0, 1] (skipped when all are equal), then the rescale to the side's range.
  if (hi > lo) for (const i of side) novelty[i] = (novelty[i] - lo) / (hi - lo);
  lo = Infinity;
  hi = -Infinity;
  for (const i of side) {
    lo = Math.min(lo, novelty[i]);
    hi = Math.max(hi, novelty[i]);
  }
  for (const i of side) rewards[i] = hi > lo ? low + 0.5 * ((novelty[i] - lo) / (hi - lo)) : low + 0.25;
}

export function novelty(g: PreparedGroup, p: Params): OperatorResult {
  const f = g.novelty;
  if (!f) throw new RangeError(`novelty: ${noveltyUnavailable(g)}`);
  const vote = weightedVote('novelty', g, new Float64Array(g.n).fill(1), p);
  delete vote.weights;
  const base = vote.rewards;
  const rewards = new Float64Array(g.n);
  const scores = new Float64Array(g.n);
  const valid: number[] = [];
  for (let i = 0; i < g.n; i++) if (f.valid[i]) valid.push(i);
  if (g.n <= 1) rewards.set(base);
  else {
    rewards.fill(-1);
    if (valid.length >= 2) {
      for (const i of valid) scores[i] = f.raw[i];
      sideRewards(
        valid.filter((i) => base[i] > 0),
        scores,
        rewards,
        0.5,
        1,
      );
      sideRewards(
        valid.filter((i) => !(base[i] > 0)),
        scores,
        rewards,
        -1,
        -0.5,
      );
    }
  }
  return { ...vote, rewards, advantages: grpoAdvantages(rewards, p.advEps, p.advScale), approximation: NOVELTY_SIMILARITY_NOTE, novelty: scores };
}
