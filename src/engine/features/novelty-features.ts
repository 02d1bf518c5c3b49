// The texts' part of EVOL-RL's novelty vote (docs/contract.md#novelty), computed with the other
// per-group features in prepareGroup: which roll-outs hold a \boxed{…} with a digit, and each
// valid roll-out's raw semantic novelty on TF-IDF similarity. The vote itself is
// src/engine/operators/novelty.ts.

import { cosinesWithin, pairIndex, tfidfRows } from './tfidf';

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
