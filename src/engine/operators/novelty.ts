// EVOL-RL's novelty-weighted vote (docs/contract.md#novelty): the majority vote (TTRL) decides
// which roll-outs are right; within the right ones rewards spread over [0.5, 1] and within the
// wrong ones over [−1, −0.5] by semantic novelty (1 − the mean of the roll-out's mean similarity to
// its own side and its largest similarity to anyone); a roll-out without a \boxed{…} holding a
// digit gets −1. EVOL-RL measures similarity with an embedding model; here it is the project's
// TF-IDF cosine of the text after `</think>` (the substitution is stated on every result).

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import { cosinesWithin, pairIndex, tfidfRows } from '../features/tfidf';
import { grpoAdvantages } from '../grpo';
import { weightedVote } from './vote';
import type { OperatorResult } from './result';

export const NOVELTY_SIMILARITY_NOTE = 'semantic similarity is the TF-IDF cosine of the text after </think>, in place of EVOL-RL’s embedding model';

/**
 * What the novelty vote reads from the texts, computed when they are at hand (prepareGroup): the
 * operator has no parameter and the vote depends on the answers alone, so each roll-out's raw
 * novelty is fixed by the group and kept instead of the N² similarities.
 */
export interface NoveltyFeatures {
  /** 1 where the text after `</think>` has a \boxed{…} whose content holds a digit. */
  valid: Uint8Array;
  /** Raw novelty 1 − (½ mean similarity to its side + ½ largest similarity) of each valid roll-out (0 elsewhere). */
  raw: Float64Array;
}

/** The text EVOL-RL compares: what follows the first `</think>`, trimmed, or the whole text. */
export function afterThink(text: string): string {
  const at = text.indexOf('</think>');
  return at < 0 ? text : text.slice(at + '</think>'.length).trim();
}

/** Whether some \boxed{…} (up to its first `}`) holds a digit. */
export function boxedHasDigit(text: string): boolean {
  for (const m of text.matchAll(/\\boxed\{([^}]*)\}/g)) if (/\d/.test(m[1])) return true;
  return false;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * The novelty features of a group: `right[i]` says whether roll-out i is in the vote's class (the
 * TTRL reward EVOL-RL starts from). TF-IDF is fitted on the valid texts only, as EVOL-RL embeds
 * only those; similarities are clipped to [0, 1] as there.
 */
export function noveltyFeatures(texts: readonly string[], right: ArrayLike<boolean | number>): NoveltyFeatures {
  const after = texts.map(afterThink);
  const valid = Uint8Array.from(after, (t) => (boxedHasDigit(t) ? 1 : 0));
  const members: number[] = [];
  for (let i = 0; i < texts.length; i++) if (valid[i]) members.push(i);
  const raw = new Float64Array(texts.length);
  const m = members.length;
  if (m < 2) return { valid, raw };
  const packed = cosinesWithin(
    tfidfRows(members.map((i) => after[i])),
    members.map((_, k) => k),
  );
  const sim = (a: number, b: number): number => Math.min(1, Math.max(0, packed[pairIndex(m, a, b)]));
  for (let a = 0; a < m; a++) {
    const side = !!right[members[a]];
    const others: number[] = [];
    const own: number[] = [];
    for (let b = 0; b < m; b++) {
      if (b === a) continue;
      const s = sim(a, b);
      others.push(s);
      if (!!right[members[b]] === side) own.push(s);
    }
    let max = -Infinity;
    for (const s of others) if (s > max) max = s;
    raw[members[a]] = 1 - (0.5 * (own.length ? mean(own) : mean(others)) + 0.5 * max);
  }
  return { valid, raw };
}

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
