// Public API of the answers module (docs/contract.md#answers): extraction, equivalence, answer classes.
// Other parts of the engine code against exactly these names.
import { explainPair } from './classes';

export { extractAnswer } from './extract';
export type { ExtractOptions } from './extract';
export { answersEqual, formClasses, clearAnswerCaches } from './classes';
export type { AnswerClass, AnswerClasses } from './classes';

export interface EqualityExplanation {
  equal: boolean;
  reason: string;
  left: { normalised: string; type: string; rewrites: string[] };
  right: { normalised: string; type: string; rewrites: string[] };
  /** The work budget or a size bound ran out: not decided, treated as not equal. */
  undecided?: boolean;
  /** Units of work the comparison used (absent when the pair was decided without one). */
  units?: number;
}

/** Why two answers were judged equal or not (shown by the extension; docs/contract.md#answer-equivalence). */
export function explainEquality(a: string, b: string): EqualityExplanation {
  const r = explainPair(a, b);
  return {
    equal: r.equal,
    reason: r.reason,
    left: { ...r.left, rewrites: [...r.left.rewrites] },
    right: { ...r.right, rewrites: [...r.right.rewrites] },
    ...(r.undecided ? { undecided: true } : {}),
    ...(r.units !== undefined ? { units: r.units } : {}),
  };
}
