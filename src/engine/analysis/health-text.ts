// Per-roll-out text measures for the run-health analysis (docs/health.md §1): the response length,
// how the answer was found (which rule of SPEC §3.1), whether the generation stopped inside a box,
// and how repetition-collapsed the text is. They need the response text, which PreparedGroup does
// not keep, so prepareGroup computes them when asked (`PrepareOptions.health`).

import { extractAnswer, lastBox } from '../answers/extract';

/** How a roll-out's answer was obtained (SPEC §3.1 priority order). */
export const ANSWER_RULES = ['logged', 'box', 'stated', 'last-number', 'none'] as const;
export type AnswerRule = (typeof ANSWER_RULES)[number];

export interface RolloutTextStats {
  /** Response length in UTF-16 code units (the logs carry no token counts). */
  length: Int32Array;
  /** Repetition share (see `repetitionShare`), 0 for texts shorter than REPETITION_MIN_LENGTH. */
  repetition: Float64Array;
  /** Index into ANSWER_RULES. */
  rule: Uint8Array;
  /** 1 when the last \boxed / \fbox never closes: the generation stopped inside the box. */
  truncated: Uint8Array;
}

/** Window of the repetition measure, in characters: longer than any formula or phrase a sound
 * derivation repeats verbatim by habit ("\frac{1}{2}", "we have"), shorter than a looping sentence. */
export const REPETITION_WINDOW = 24;
/** Below this length the measure is not computed (a short answer has too few windows to judge). */
export const REPETITION_MIN_LENGTH = 200;
/**
 * A roll-out is repetition-collapsed when at least this share of its 24-character windows repeat
 * an earlier window of the same text, i.e. at least half the text is a verbatim copy of what came
 * before (a loop of period p repeated k times scores ≈ 1 − 1/k: two full copies already give 0.5).
 * Sound derivations (the synthetic roll-outs, the verl and TRL fixtures, the demo run) stay below
 * 0.25; see docs/health.md for the examples the threshold was set on.
 */
export const REPETITION_THRESHOLD = 0.5;

/**
 * Share of the text's windows of REPETITION_WINDOW characters that already occurred earlier in
 * the text (a rolling polynomial hash, two independent 26-bit hashes combined, so a false match
 * needs a double collision). 0 for texts shorter than REPETITION_MIN_LENGTH.
 */
export function repetitionShare(text: string): number {
  const W = REPETITION_WINDOW;
  const L = text.length;
  if (L < REPETITION_MIN_LENGTH) return 0;
  const M1 = 67108859; // primes below 2^26: products stay below 2^53
  const M2 = 67108837;
  const B1 = 257;
  const B2 = 263;
  let p1 = 1;
  let p2 = 1;
  for (let k = 0; k < W - 1; k++) {
    p1 = (p1 * B1) % M1;
    p2 = (p2 * B2) % M2;
  }
  let h1 = 0;
  let h2 = 0;
  const seen = new Set<number>();
  let repeated = 0;
  for (let i = 0; i < L; i++) {
    const c = text.charCodeAt(i);
    if (i >= W) {
      const old = text.charCodeAt(i - W);
      h1 = (h1 - ((old * p1) % M1) + M1) % M1;
      h2 = (h2 - ((old * p2) % M2) + M2) % M2;
    }
    h1 = (h1 * B1 + c) % M1;
    h2 = (h2 * B2 + c) % M2;
    if (i >= W - 1) {
      const key = h1 * 67108864 + h2;
      if (seen.has(key)) repeated++;
      else seen.add(key);
    }
  }
  return repeated / (L - W + 1);
}

/** Which rule of SPEC §3.1 found the answer of `response` (given the answer prepareGroup kept). */
export function answerRule(response: string, answer: string | null, logged: boolean): { rule: AnswerRule; truncated: boolean } {
  const box = lastBox(response);
  const truncated = box === null;
  if (logged) return { rule: 'logged', truncated };
  if (answer === null) return { rule: 'none', truncated };
  if (box !== undefined) return { rule: 'box', truncated };
  // No box: a stated answer ("final answer is", "answer:", a bare choice letter) or, failing
  // those, the last-number fallback. Re-running extraction without that fallback tells them apart.
  return { rule: extractAnswer(response, { lastNumber: false }) !== null ? 'stated' : 'last-number', truncated };
}

export function rolloutTextStats(responses: readonly string[], answers: readonly (string | null)[], logged: readonly boolean[]): RolloutTextStats {
  const n = responses.length;
  const out: RolloutTextStats = { length: new Int32Array(n), repetition: new Float64Array(n), rule: new Uint8Array(n), truncated: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    const text = responses[i] ?? '';
    out.length[i] = text.length;
    out.repetition[i] = repetitionShare(text);
    const r = answerRule(text, answers[i] ?? null, logged[i] ?? false);
    out.rule[i] = ANSWER_RULES.indexOf(r.rule);
    out.truncated[i] = r.truncated ? 1 : 0;
  }
  return out;
}
