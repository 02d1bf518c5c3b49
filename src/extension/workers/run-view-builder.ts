// The run view's model (src/protocol/compare.ts) from the per-group health records the what-if
// workers compute: one run, or two side by side (src/engine/analysis/runs-compare.ts). Built on a
// worker thread (the 'runView' request: each side's health analysis runs permutation tests).
import type { OperatorId } from '../../engine';
import { analyseRun, compareRuns, labelFreeCopies, runSummary, trainingRecords, type GroundTruthMode, type GroupHealth, type RunSide } from '../../engine';
import { MAX_DISAGREEMENTS, type RunViewModel } from '../../protocol/compare-messages';

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
