// The shapes of a run comparison (runs-compare.ts), which `compare --json` prints and the run view
// draws. Types only, with no imports but types, so the webview can use them without compiling the engine.
import type { Alarm, OperatorId } from './health-types';

export type CompareSeriesId = 'label_accuracy' | 'reward_accuracy' | 'majority_ratio' | 'gate' | 'signal_groups' | 'rollouts_seen';

export interface CompareRun {
  name: string;
  operator: OperatorId;
  groups: number;
  rollouts: number;
  steps: number;
  /** Over the groups with logged ground truth where the operator ran. */
  labelAccuracy: { correct: number; over: number; value: number | null };
  /** Mean over those groups of the operator's reward accuracy. */
  rewardAccuracy: number | null;
  series: Record<CompareSeriesId, (number | null)[]>;
  alarms: Alarm[];
  notes: string[];
}

export interface Disagreement {
  questionId: string;
  /** 0 for the first time both runs saw the question, 1 for the second, … */
  occurrence: number;
  stepA: number;
  stepB: number;
  labelA: string | null;
  labelB: string | null;
  /** The logged ground truth (when either side logs it). */
  truth: string | null;
  /** Which label the logged ground truth agrees with; null without ground truth. */
  agrees: 'a' | 'b' | 'both' | 'neither' | null;
}

export interface RunsComparison {
  format: 'consensus-lens/compare/v1';
  /** The union of both runs' steps, ascending: every series runs along it. */
  steps: number[];
  runs: [CompareRun, CompareRun];
  shared: {
    /** Distinct question ids both runs saw. */
    questions: number;
    /** Paired occurrences (see the header). */
    pairs: number;
    /** Pairs where both operators ran and set a label or none. */
    compared: number;
    agree: number;
    part: number;
    /** Of the parting pairs, with logged ground truth: which side it agrees with. */
    partWithTruth: number;
    aRight: number;
    bRight: number;
    neitherRight: number;
    /** Over all compared pairs with ground truth: each side's correct labels. */
    withTruth: number;
    aCorrect: number;
    bCorrect: number;
  };
  /** Every pair whose labels part, by step of run A. */
  disagreements: Disagreement[];
}
