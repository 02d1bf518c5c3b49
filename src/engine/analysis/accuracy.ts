// Pseudo-label accuracy against logged ground truth: one definition for every surface (`report`,
// `sweep`, the run dashboard, the re-score result). It is a diagnostic — ground truth is never an
// input of any operator — and it is counted per operator:
//
//   accuracy(op) = #{questions with logged ground truth where op ran and its label ≡ ground truth}
//                  / #{questions with logged ground truth where op ran}
//
// "Ran" means the operator could score the question: T3RL needs verifications, MS-TTRL outcome
// checks (or its cache), so on a run that logs them for some questions only, their accuracy is over
// those questions and not over every question with ground truth. A question where the operator ran
// but set no label (every roll-out unanswered) counts as wrong. The denominator is always shown
// with the figure ("x% (n)") when it is smaller than the questions with ground truth, so two
// operators' figures over different questions are not read as comparable.
//
// Pure and import-free: the webviews bundle it too.

/** Correct labels over the questions counted (see the header for which ones count). */
export interface AccuracyCount {
  correct: number;
  over: number;
}

export const emptyAccuracy = (): AccuracyCount => ({ correct: 0, over: 0 });

/**
 * Counts one question for one operator: `correct` is whether its label is equivalent to the logged
 * ground truth; null or undefined when the question has no ground truth or the operator did not run
 * on it (then the question is not counted).
 */
export function countAccuracy(c: AccuracyCount, correct: boolean | null | undefined): void {
  if (correct === null || correct === undefined) return;
  c.over++;
  if (correct) c.correct++;
}

/** The share, or null when no question counts. */
export function accuracyOf(c: AccuracyCount): number | null {
  return c.over > 0 ? c.correct / c.over : null;
}

/**
 * "83.3%" when the operator is counted over every question with ground truth, "100.0% (2)" when
 * over fewer (the 2 questions it could run on), "-" (or `none`) when over none.
 */
export function formatAccuracy(accuracy: number | null | undefined, over: number | undefined, withTruth: number, none = '-'): string {
  if (accuracy === null || accuracy === undefined || !Number.isFinite(accuracy)) return none;
  const pct = `${(100 * accuracy).toFixed(1)}%`;
  return over !== undefined && over < withTruth ? `${pct} (${over})` : pct;
}
