// The run-health analysis's data shapes (docs/health.md): what groupHealth returns per group and
// analyseRun per run, which `consensus-lens health --json` prints and the dashboard draws. Types
// only, with no imports, so the webview can use them without compiling the engine.

import type { OperatorId } from '../operators/ids';

export type { OperatorId };
export type FlagName = 'empty' | 'noAnswer' | 'truncated' | 'repetitive' | 'nearDuplicate' | 'unformatted';

/** Mann–Whitney counts of one group: U = Σ over (positive, negative) pairs of [c_p > c_q] + ½[c_p = c_q]. */
export interface AurocCounts {
  u: number;
  pairs: number;
}

/** What the reward-bug classifier needs from a group whose every roll-out has a logged reward. */
export interface RewardEvidence {
  configured: OperatorId;
  logged: number[];
  /** The configured operator's rewards. */
  expected: number[];
  classOf: number[];
  classSizes: number[];
  /** Label class of every operator that ran. */
  labels: Partial<Record<OperatorId, number>>;
  /** Class equivalent to the logged ground truth (-1: none), null without ground truth. */
  truthClass: number | null;
}

export interface GroupHealth {
  run?: string;
  /** 'validation': a validation dump's group (rewards against the real answer). */
  stream?: 'validation';
  step: number;
  questionId: string;
  n: number;
  /** Whether the text measures (truncated, repetitive, unformatted, length) were computed. */
  hasText: boolean;
  flags: number[];
  answered: number;
  distinct: number;
  majorityRatio: number | null;
  /** Shannon entropy (nats) of the answer-class distribution of the answered roll-outs. */
  entropy: number | null;
  meanLength: number | null;
  /** CoRE's gate (EC's when CoRE did not run). */
  gate: number | null;
  meanConfidence: number | null;
  voteLabel: string | null;
  voteClass: number;
  /** The vote's class is mostly (more than half) degenerate roll-outs. */
  degeneratePlurality: boolean;
  /** Operators whose label is another class than the vote's, when the vote's class is degenerate. */
  rescuedBy: OperatorId[];
  /** Diagnostics against logged ground truth (never an operator input). */
  truth: { labelCorrect: boolean; rewardAccuracy: number; correct: number } | null;
  /** The logged ground truth itself, when there is one (shown where two runs' labels part). */
  groundTruth?: string;
  /** The ground truth is a field a TTRL-style trainer may overwrite with the vote (Group.truthMayBeVote). */
  truthMayBeVote?: true;
  auroc: { label?: AurocCounts; truth?: AurocCounts };
  rewards?: RewardEvidence;
  /** Rewards logged but no operator named: the operators whose rewards equal the logged ones (GroupScore.rewardMatches). */
  rewardMatches?: OperatorId[];
  /** Each operator that ran: its label, read-outs against logged ground truth, the roll-outs that still teach (learning-signal.ts). */
  operators?: Partial<Record<OperatorId, OperatorOutcome>>;
  /** "How many roll-outs": per N', per operator, [hits, trials] (hits = correct with ground truth,
   * else the same answer class as the operator's full-N label). */
  whatif?: Record<string, Partial<Record<OperatorId, [number, number]>>>;
}

/** One operator on one group (learning-signal.ts). */
export interface OperatorOutcome {
  label: string | null;
  labelClass: number;
  /** label ≡ logged ground truth; null without ground truth (a diagnostic, never an input). */
  correct: boolean | null;
  /** TTRL's reward accuracy for this operator's label; null without ground truth. */
  rewardAccuracy: number | null;
  gate: number;
  /** Roll-outs whose effective GRPO advantage A_i · w_q is non-zero (0: the group teaches nothing). */
  signal: number;
}

/** The learning signal left, per step (docs/health.md §6); arrays run along RunHealth.steps. */
export interface LearningSignal {
  /** The operator the run trains with (its series is the alarm-tested `signal_groups`). */
  configured: OperatorId;
  operators: OperatorId[];
  /** Share of groups with a non-zero effective advantage, per operator (null: it ran on none). */
  groups: Partial<Record<OperatorId, (number | null)[]>>;
  /** Share of roll-outs with one. */
  rollouts: Partial<Record<OperatorId, (number | null)[]>>;
  /** The same over the whole run. */
  total: Partial<Record<OperatorId, { groups: number | null; rollouts: number | null }>>;
  /** Share of groups where every roll-out gives the same answer. */
  saturated: (number | null)[];
  /** CoRE's share of groups with signal minus the vote's (null when either did not run). */
  coreVsVote: (number | null)[] | null;
  /** Of the saturated groups, the share where CoRE's graded rewards still give signal. */
  saturatedCoreSignal: (number | null)[] | null;
}

export interface Series {
  id: string;
  label: string;
  /** One value per entry of RunHealth.steps; null where the step has no data for it. */
  values: (number | null)[];
}

export interface Alarm {
  series: string;
  label: string;
  /** The first step of the new level. */
  step: number;
  before: number;
  after: number;
  p: number;
  message: string;
}

export interface PremiseCheck {
  /** Pooled within-question AUROC: Σ U / Σ pairs over groups (each pair compares two roll-outs of one question). */
  auroc: number | null;
  groups: number;
  pairs: number;
  verdict: PremiseVerdict;
  message: string;
}

export interface RewardBug {
  kind: RewardBugKind;
  groups: number;
  /** Groups with logged rewards the class was tested on. */
  of: number;
  firstStep: number;
  example: { step: number; question_id: string; run?: string };
  message: string;
}

export interface RolloutsWhatIf {
  /** N' values, then 'full'. */
  sizes: string[];
  metric: 'accuracy' | 'agreement';
  /** Per operator, per size: hits / trials (null when no trial). */
  values: Partial<Record<OperatorId, (number | null)[]>>;
  groups: number;
  draws: number;
  idfRefit: false;
}

export interface RunHealth {
  format: 'consensus-lens/health/v1';
  groups: number;
  rollouts: number;
  steps: number[];
  series: Series[];
  alarms: Alarm[];
  premise: { label: PremiseCheck; truth: PremiseCheck | null };
  degenerate: {
    /** Roll-outs per flag (text flags count only where texts were read). */
    flags: Record<FlagName, number>;
    degenerateRollouts: number;
    pluralities: number;
    /** Degenerate pluralities where another operator chose a different class. */
    rescued: Partial<Record<OperatorId, number>>;
    examples: { step: number; question_id: string; run?: string; label: string | null }[];
  };
  rewardBugs: RewardBug[];
  rolloutsWhatIf: RolloutsWhatIf | null;
  learningSignal: LearningSignal | null;
  notes: string[];
}

export type PremiseVerdict = 'informative' | 'uninformative' | 'misleading' | 'too few';

export type RewardBugKind = 'constant-penalty' | 'inverted' | 'different-label' | 'ground-truth-leak' | 'scaled';
