// Per-roll-out text measures for the run-health analysis (docs/health.md §1): the response length,
// how the answer was found (which rule of docs/contract.md#answer-extraction), whether the generation stopped inside a box,
// and how repetition-collapsed the text is. They need the response text, which PreparedGroup does
// not keep, so prepareGroup computes them when asked (`PrepareOptions.health`).

import { extractAnswer, lastBox } from '../answers/extract';

/** How a roll-out's answer was obtained (docs/contract.md#answer-extraction priority order). */
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

// Scratch hash table of repetitionShare (open addressing), grown on demand.
let table = new Int32Array(1 << 14);
let used = new Uint8Array(1 << 14);

/**
 * Share of the text's windows of REPETITION_WINDOW characters that already occurred earlier in
 * the text. A rolling polynomial hash modulo 2^32 (Math.imul) indexes an open-addressing table; a
 * false match needs two different windows with the same 32-bit hash (about L/2^32 per window, a
 * few in a million for a long response). 0 for texts shorter than REPETITION_MIN_LENGTH.
 */
export function repetitionShare(text: string): number {
  const W = REPETITION_WINDOW;
  const L = text.length;
  if (L < REPETITION_MIN_LENGTH) return 0;
  const windows = L - W + 1;
  let size = table.length;
  while (size < 2 * windows) size *= 2;
  if (size !== table.length) {
    table = new Int32Array(size);
    used = new Uint8Array(size);
  } else used.fill(0);
  const mask = size - 1;
  const B = 0x01000193;
  let pw = 1; // B^(W-1) mod 2^32
  for (let k = 0; k < W - 1; k++) pw = Math.imul(pw, B);
  let h = 0;
  let repeated = 0;
  for (let i = 0; i < L; i++) {
    if (i >= W) h = (h - Math.imul(text.charCodeAt(i - W), pw)) | 0;
    h = (Math.imul(h, B) + text.charCodeAt(i)) | 0;
    if (i < W - 1) continue;
    // Fibonacci hashing spreads the (polynomial, low-bit-poor) hash over the table.
    let slot = (Math.imul(h, 0x9e3779b1) >>> 0) & mask;
    for (;;) {
      if (!used[slot]) {
        used[slot] = 1;
        table[slot] = h;
        break;
      }
      if (table[slot] === h) {
        repeated++;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  return repeated / windows;
}

/** Which rule of docs/contract.md#answer-extraction found the answer of `response` (given the answer prepareGroup kept). */
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
