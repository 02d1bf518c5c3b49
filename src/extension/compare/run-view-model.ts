// One side of a question both runs saw, for the run view's side-by-side panel (the run view's
// model itself is built on a worker thread: src/extension/workers/run-view-builder.ts). Pure: no 'vscode'.
import type { OperatorId } from '../../engine';
import type { PairSide } from '../../protocol/compare-messages';
import type { QuestionView } from '../../protocol/messages';

/** One side of the side-by-side panel, from the question's view under the side's operator. */
export function pairSide(run: string, operator: OperatorId, v: QuestionView): PairSide {
  const o = v.operators.find((x) => x.operator === operator);
  const labelClass = o?.available ? o.labelClass : -1;
  return {
    run,
    operator,
    step: v.key.step,
    questionId: v.key.questionId,
    n: v.n,
    label: o?.available ? o.label : null,
    groundTruth: v.groundTruth,
    // The operator's gate of the tree and the consensus panel: CoRE's w_q (QuestionView.gate), not
    // the side's operator's own (a vote's is 1 by definition, which said nothing).
    gate: v.gate,
    classes: v.classes.map((c) => ({ answer: c.answer, size: c.size, isLabel: c.index === labelClass, matchesGroundTruth: c.matchesGroundTruth })),
  };
}
