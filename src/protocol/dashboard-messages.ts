// Typed messages between the extension host and the run dashboard (webview). Imported by
// both sides; no 'vscode', no DOM. The webview draws what the host computed; it never scores.
import { isOperatorId, type OperatorId } from './messages';
import type { RunHealth } from '../engine/browser';
import { isRecord } from '../util/is-record';

export const DASHBOARD_PROTOCOL = 1;

export interface DashStep {
  step: number;
  groups: number;
  meanGate: number;
  meanMajorityRatio: number;
  overturns: Partial<Record<OperatorId, number>>;
  /** Per operator: pseudo-label accuracy over `accuracyGroups[op]` questions (src/engine/analysis/accuracy.ts). */
  accuracy: Partial<Record<OperatorId, number>>;
  /** Per operator: the questions of the step with logged ground truth on which it could run. */
  accuracyGroups: Partial<Record<OperatorId, number>>;
  /** Questions of the step with logged ground truth. */
  withTruth: number;
  mismatches: number;
  regimes: Record<string, number>;
  /** Per operator: the share of the step's groups (where it ran) whose GRPO advantage is non-zero (docs/health.md §6). */
  signal: Partial<Record<OperatorId, number>>;
  /**
   * Consensus operator → confidence operator → the share of the step's questions (where both ran)
   * on which the consensus pseudo-label and the confidence reward's top roll-out are the same
   * answer class: how far the two families agree.
   */
  familyAgreement: Partial<Record<OperatorId, Partial<Record<OperatorId, number>>>>;
}

export interface DashRecoveryPoint {
  step: number;
  questionId: string;
  x: number;
  y: number;
  voteBar: number;
  confidenceBar: number;
  recoverable: boolean;
  overturn: boolean;
}

export interface DashModel {
  runId: string;
  groups: number;
  steps: DashStep[];
  regimes: Record<string, number>;
  recovery: DashRecoveryPoint[];
  agreement: { operators: OperatorId[]; rates: (number | null)[][]; both: number[][]; accuracy: (number | null)[]; withTruth: number[] };
  hasTruth: boolean;
  /** Questions of the run with logged ground truth. */
  withTruth: number;
  ms: number;
  /** Run health: timeline series, change-point alarms, premise, reward bugs (docs/health.md). */
  health?: RunHealth;
}

export interface DashSweep {
  runId: string;
  operator: OperatorId;
  kappas: number[];
  taus: number[];
  cells: { kappa: number; tau: number; groups: number; flips: number; gateSum: number; withTruth: number; correct: number }[];
  ms: number;
}

export interface DashHistogram {
  lo: number;
  hi: number;
  counts: number[];
  n: number;
}

/** The last completed re-score of the run (a cancelled one never replaces it). */
export interface DashWhatIf {
  runId: string;
  operator: OperatorId;
  changed: Record<string, number>;
  groups: number;
  rollouts: number;
  flipsCount: number;
  signChanges: number;
  meanGateBefore: number;
  meanGateAfter: number;
  accuracyBefore: number | null;
  accuracyAfter: number | null;
  withTruth: number;
  steps: { step: number; groups: number; flips: number; signChanges: number; meanGateBefore: number; meanGateAfter: number; accuracyBefore: number | null; accuracyAfter: number | null }[];
  /** The first flips (up to 1,000): step, question, labels. */
  flips: { step: number; questionId: string; before: string | null; after: string | null }[];
  histograms: { rewardShift: DashHistogram; advantageShift: DashHistogram; gateBefore: DashHistogram; gateAfter: DashHistogram };
  ms: number;
  at: number;
}

export interface DashRun {
  id: string;
  label: string;
}

export type DashHostMessage =
  | { type: 'init'; protocol: number; runs: DashRun[]; runId: string | null; operators: OperatorId[]; params: Record<string, number>; configured: OperatorId }
  | { type: 'model'; model: DashModel; live: boolean }
  | { type: 'sweep'; sweep: DashSweep }
  | { type: 'whatif'; whatif: DashWhatIf | null }
  | { type: 'busy'; what: string | null }
  | { type: 'error'; message: string };

export type DashWebviewMessage =
  | { type: 'ready' }
  | { type: 'selectRun'; runId: string }
  | { type: 'openQuestion'; step: number; questionId: string }
  | { type: 'runSweep'; operator: OperatorId }
  | { type: 'rescore' }
  | { type: 'export'; format: 'jsonl' | 'csv' }
  /** Opens the runs side by side: the dashboard's run (A) and `runId` (B; the same run: two operators). */
  | { type: 'compareWith'; runId: string };

/** The operators the κ × τ heatmap offers, in the order its menu lists them (CoRE first: its default). */
export const SWEEP_OPERATORS: readonly OperatorId[] = ['core', 'ec', 'cisc'];

/** Validates a message from the dashboard webview (untrusted input to the host). */
export function parseDashMessage(v: unknown): DashWebviewMessage | null {
  if (!isRecord(v) || typeof v.type !== 'string') return null;
  switch (v.type) {
    case 'ready':
    case 'rescore':
      return { type: v.type };
    case 'selectRun':
      return typeof v.runId === 'string' ? { type: 'selectRun', runId: v.runId } : null;
    case 'openQuestion':
      return typeof v.step === 'number' && Number.isFinite(v.step) && typeof v.questionId === 'string' ? { type: 'openQuestion', step: v.step, questionId: v.questionId } : null;
    case 'runSweep':
      return isOperatorId(v.operator) ? { type: 'runSweep', operator: v.operator } : null;
    case 'export':
      return v.format === 'jsonl' || v.format === 'csv' ? { type: 'export', format: v.format } : null;
    case 'compareWith':
      return typeof v.runId === 'string' ? { type: 'compareWith', runId: v.runId } : null;
  }
  return null;
}
