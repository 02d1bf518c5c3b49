// The report's data: what `report --json` prints (in snake_case) and what the report page
// (webview/report/main.ts) renders from the JSON embedded in it. Types and constants only, importing
// only types, so the page's browser bundle can use them.
import type { RunHealth } from '../engine/browser';

/** The report page's series colours (light and dark theme): its stylesheet's classes .series-K. */
// One per operator (eleven): the label-free ones after the six consensus operators' colours.
export const SERIES_COLOURS = ['#0969da', '#bf3989', '#1a7f37', '#9a6700', '#8250df', '#cf222e', '#bc4c00', '#1b7c83', '#6e7781', '#0a3069', '#527a29'];
export const SERIES_COLOURS_DARK = ['#4493f8', '#db61a2', '#3fb950', '#d29922', '#a371f7', '#f85149', '#db6d28', '#39c5cf', '#8b949e', '#a5d6ff', '#8aa34a'];

/** Logged rewards against the configured operator's (`health` and `report` alike). */
export interface MismatchSummary {
  /** Training groups with a logged reward for every roll-out. */
  checked: number;
  groups: number;
  /** The configured operators checked against (the flag's, or what the groups logged). */
  operators: string[];
  /**
   * Training groups with logged rewards whose log names no operator (and none was given): not
   * checked against an assumed one. `matches[op]`: how many of them have exactly op's rewards.
   */
  unnamed?: { groups: number; matches: Record<string, number> };
}

export interface ReportGroup {
  step: number;
  question_id: string;
  run?: string;
  n: number;
  regime: string;
  majority_ratio: number | null;
  overturn: boolean | null;
  ground_truth: string | null;
  labels: Record<string, string | null>;
  gates: Record<string, number | null>;
  /** Per operator: label equals ground truth (null without ground truth or without a label). */
  correct: Record<string, boolean | null>;
  unavailable: Record<string, string>;
  confidence?: 'used' | 'missing';
  reward_mismatches?: number;
  /** 'validation' for a validation dump's group. */
  stream?: 'validation';
}

export interface ReportStep {
  step: number;
  groups: number;
  rollouts: number;
  regimes: Record<string, number>;
  /** Per operator other than majority: groups whose label differs from majority's. */
  flips: Record<string, number>;
  /** Per operator: mean gate over the groups it ran on. */
  mean_gate: Record<string, number | null>;
  /** Per operator: label accuracy over the groups with ground truth it ran on (absent when none). */
  accuracy: Record<string, number | null>;
  /** Per operator: how many groups with ground truth the accuracy is over. */
  accuracy_groups: Record<string, number>;
  with_truth: number;
  reward_mismatch_groups: number;
}

export interface StreamReport {
  steps: ReportStep[];
  total: ReportStep;
}

/** One run of the path (a folder may hold several): its training steps and its validation stream. */
export interface RunSection {
  /** The run's name (null when the path holds one run). */
  run: string | null;
  steps: ReportStep[];
  total: ReportStep;
  validation?: StreamReport;
  health?: RunHealth;
  /** Logged rewards against the configured operator's: the same check as `health`'s. */
  reward_mismatch: MismatchSummary;
}

export interface RunReport {
  format: 'consensus-lens/report/v1';
  title: string;
  path: string;
  generated: string;
  operators: string[];
  /** The operator parameters given (the rest are the defaults). */
  params: Record<string, unknown>;
  /** The training stream (every group that is not a validation dump's). */
  steps: ReportStep[];
  total: ReportStep;
  /** The validation stream, when the run has one. */
  validation?: StreamReport;
  /** Set when logged ground truth was left out of accuracy, and why. */
  /** `--ground-truth` (docs/contract.md#ground-truth). */
  ground_truth_mode?: 'auto' | 'use' | 'ignore';
  ground_truth_note?: string;
  /** Under `auto`: the logged ground truth looks like the pseudo-label (equal to the vote in `matching` of `groups` training groups). */
  ground_truth_looks_like_vote?: { groups: number; matching: number };
  groups: ReportGroup[];
  notices: { level: 'info' | 'warning' | 'error'; message: string; file?: string; line?: number }[];
  /** Run health (docs/health.md): alarms, the confidence premise, reward bugs, degenerate roll-outs
   * (of the largest run when the path holds several; each is in `health_runs`). */
  health?: RunHealth;
  /** The reward-mismatch check of the run at the top level. */
  reward_mismatch?: MismatchSummary;
  /** Every run of the path, each on its own (the top-level fields are the largest's), when there are several. */
  runs?: RunSection[];
}

