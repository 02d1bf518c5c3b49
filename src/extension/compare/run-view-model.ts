// The run view's model (src/protocol/compare-messages.ts) from the per-group health records the what-if
// workers compute: one run, or two side by side (src/engine/analysis/runs-compare.ts), and one
// side of a question both runs saw. Pure: no 'vscode'.
import type { OperatorId } from '../../engine';
import { analyseRun, labelFreeCopies, type GroundTruthMode, type GroupHealth } from '../../engine';
import { compareRuns, runSummary, trainingRecords, type RunSide } from '../../engine';
import { MAX_DISAGREEMENTS, type PairSide, type RunViewModel } from '../../protocol/compare-messages';
import type { QuestionView } from '../../protocol/messages';

/** A run's side from its health records: training records of its largest run, label-free truth. */
export function sideOf(name: string, operator: OperatorId, health: readonly GroupHealth[], warn: (m: string) => void, groundTruth: GroundTruthMode = 'auto'): RunSide {
  const records = trainingRecords(labelFreeCopies(health, groundTruth), name, warn);
  return { name, operator, records, health: analyseRun(records, { configuredOperator: operator }) };
}

export function runViewModel(sides: RunSide[], runIds: string[]): RunViewModel {
  if (sides.length === 2) {
    const c = compareRuns(sides[0], sides[1]);
    return {
      runs: c.runs,
      runIds,
      steps: c.steps,
      signal: sides.map((s) => s.health.learningSignal),
      shared: c.shared,
      disagreements: c.disagreements.slice(0, MAX_DISAGREEMENTS),
      disagreementsTotal: c.disagreements.length,
    };
  }
  const s = sides[0];
  const steps = s.health.steps;
  return { runs: [runSummary(s, steps)], runIds, steps, signal: [s.health.learningSignal], shared: null, disagreements: [], disagreementsTotal: 0 };
}

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
