// Typed messages between the extension host and the consensus panel (webview). Imported by both
// sides; no 'vscode', no DOM. One discriminated union per direction. The webview never computes
// rewards: everything numeric it shows arrives in a QuestionView.

export const PROTOCOL_VERSION = 1;

export { OPERATOR_IDS, OPERATOR_LABELS, OPERATOR_FAMILIES, OPERATOR_FAMILY_IDS, isOperatorId, type OperatorId, type OperatorFamily } from '../engine/browser';
import type { OperatorId } from '../engine/browser';
import { isRecord } from '../util/is-record';

export type Regime = 'saturated' | 'contested' | 'competence-floor' | 'empty';

/** A slider the panel shows: one operator parameter with its default and range (docs/contract.md#operators). */
export interface ParamSpec {
  key: string;
  label: string;
  min: number;
  max: number;
  step: number;
  default: number;
  /** Operators this parameter affects (the panel shows it when one of them is shown). */
  operators: OperatorId[];
  description: string;
}

/** Identifies one group: (run, step, question). */
export interface QuestionKey {
  runId: string;
  step: number;
  questionId: string;
}

export interface OperatorOutcome {
  operator: OperatorId;
  available: boolean;
  /** Why the operator is unavailable or runs degraded (e.g. "confidence missing"). */
  note?: string;
  label: string | null;
  gate: number;
  /** Index of the winning class in QuestionView.classes, or -1. */
  labelClass: number;
  /** Whether this operator's label differs from majority's. */
  flipsMajority: boolean;
  /** Diagnostic only: whether the label equals the logged ground truth (null when none is logged). */
  correct: boolean | null;
}

export interface RolloutRow {
  /** Position in the group (0-based): the index used everywhere in the view. */
  index: number;
  sampleIdx: number | null;
  answer: string | null;
  /** Index into QuestionView.classes, or -1 for "no answer". */
  classIndex: number;
  /** Mean token log-prob c_i, when logged. */
  confidence: number | null;
  /** CoRE confidence weight w_i (null when confidence is missing). */
  weight: number | null;
  /** Equilibrium mass x*_i under CoRE (or EC when confidence is missing). */
  mass: number | null;
  /** Whether the roll-out is in the dominant set σ. */
  inSupport: boolean;
  /** Reward under each available operator. */
  rewards: Partial<Record<OperatorId, number>>;
  /** GRPO advantage under each available operator (docs/contract.md#grpo-view). */
  advantages: Partial<Record<OperatorId, number>>;
  /** The reward the training loop logged, when present. */
  loggedReward: number | null;
  /** The advantage the trainer logged (what trained; TRL's table), when present. */
  loggedAdvantage?: number | null;
  /** |logged − configured operator's reward| > 1e-6. */
  mismatch: boolean;
  /** Run-health flags (docs/health.md §1): empty, noAnswer, truncated, repetitive, nearDuplicate, unformatted. */
  flags?: string[];
  /** First characters of the response (text only; rendered with textContent). */
  preview: string;
  hasSource: boolean;
}

export interface ClassRow {
  index: number;
  answer: string;
  size: number;
  /** Σ x* over the class. */
  mass: number;
  /** Mean within-class off-diagonal affinity A_ij (0 for a singleton). */
  meanAffinity: number;
  /** Operators whose label is this class. */
  labelOf: OperatorId[];
  /** Diagnostic only: this class is equivalent to the logged ground truth. */
  matchesGroundTruth: boolean | null;
}

export interface GraphEdge {
  source: number;
  target: number;
  /** Affinity A_ij (uncalibrated). */
  weight: number;
}

export interface RecoveryReadout {
  /** Plurality class (size m, c_w, w̄_w) and runner-up (n*, c*, w̄_*). */
  m: number;
  cw: number;
  wbarW: number;
  nStar: number;
  cStar: number;
  wbarStar: number;
  /** (w̄_w/w̄_*)·(m−1)/(n*−1)·c_w: the runner-up needs c* above it to be recovered. */
  threshold: number | null;
  /** c* − threshold (positive: the runner-up can win). */
  margin: number | null;
}

/** Run health of a question (docs/health.md): the degenerate plurality and the confidence premise. */
export interface QuestionHealth {
  /** More than half of the vote's class is empty, truncated or repetition-collapsed roll-outs. */
  degeneratePlurality: boolean;
  /** Operators whose label is another class than the vote's degenerate one. */
  rescuedBy: OperatorId[];
  /** Within-question AUROC of c_i for "in the vote's class" (null without confidences or with one kind). */
  auroc: number | null;
  /** The same pooled over the run's questions scored so far, and its verdict. */
  runAuroc: number | null;
  runVerdict: string | null;
  runMessage: string | null;
}

export interface QuestionView {
  key: QuestionKey;
  runLabel: string;
  n: number;
  prompt: string | null;
  /** Diagnostic only. */
  groundTruth: string | null;
  /** Every accepted form of the ground truth when the log holds several (a label equal to any is correct). */
  groundTruthForms?: string[];
  /** The operator the run is configured with (its rewards are checked against the log). */
  configuredOperator: OperatorId;
  health?: QuestionHealth;
  params: Record<string, number>;
  regime: Regime;
  /** CoRE's label differs from majority's. */
  overturn: boolean;
  /** CoRE gate w_q = x*ᵀ A x*. */
  gate: number;
  iterations: number | null;
  confidence: 'present' | 'missing';
  recovery: RecoveryReadout | null;
  operators: OperatorOutcome[];
  rollouts: RolloutRow[];
  classes: ClassRow[];
  edges: GraphEdge[];
  mismatches: number;
  /** Host time spent scoring this view (ms). */
  scoreMs: number;
}

/**
 * The interval of κ (or τ) around the current value over which the question's CoRE label
 * stays the same (grid bracket + bisection to ~1e-4; see src/engine/analysis/sensitivity.ts).
 */
export interface SensitivityRange {
  param: 'kappa' | 'tau';
  value: number;
  label: string | null;
  lo: number;
  hi: number;
  loIsRangeEnd: boolean;
  hiIsRangeEnd: boolean;
  belowLabel?: string | null;
  aboveLabel?: string | null;
  /** Distance to the nearest flip (null: none in the searched range). */
  distance: number | null;
  /** False when the parameter cannot move the label (τ without confidence). */
  affects: boolean;
}

/** A roll-out's token log-probs by position (read back from its record after the view is shown). */
export interface TokenCurve {
  /** RolloutRow.index. */
  index: number;
  /** What the record holds: log-probs with the tokens' text, log-probs only, only a mean, nothing. */
  kind: 'tokens' | 'logprobs' | 'mean' | 'none';
  tokens: number;
  /** Mean log-prob of equal buckets of positions, first to last (null: none logged there). */
  curve: (number | null)[];
}

// ---- host → webview ----------------------------------------------------------------------

export type HostMessage =
  | { type: 'init'; protocol: number; params: ParamSpec[]; operators: OperatorId[] }
  /** seq: the host's view id (src/protocol/channel.ts); request: the webview's setParams/resetParams id it answers. */
  | { type: 'view'; seq: number; request?: number; view: QuestionView; reason: 'open' | 'rescore' | 'update' }
  | { type: 'empty'; message: string }
  | { type: 'error'; seq: number; message: string }
  | { type: 'select'; index: number }
  /** The κ/τ intervals of view `seq` (at its parameters): shown only while that view is. */
  | { type: 'sensitivity'; seq: number; params: Record<string, number>; ranges: SensitivityRange[] }
  /** The roll-outs' token curves of the question `key` and a line on what is logged (null: nothing to say). */
  | { type: 'tokenCurves'; key: QuestionKey; rows: TokenCurve[]; note: string | null };

// ---- webview → host ----------------------------------------------------------------------

export type WebviewMessage =
  | { type: 'ready'; state: PanelState | null }
  | { type: 'setParams'; seq: number; params: Record<string, number> }
  | { type: 'resetParams'; seq: number }
  | { type: 'openRollout'; index: number }
  | { type: 'revealInLog'; index: number }
  /** `at`: the webview's wall clock when the view was on screen (same machine as the host in
   * practice), so the host can time a switch without the message's trip back. */
  | { type: 'rendered'; seq: number; ms: number; at?: number };

/** What the panel persists with setState (and the serializer restores). */
export interface PanelState {
  key: QuestionKey | null;
  params: Record<string, number> | null;
}

const HOST_TYPES = new Set(['init', 'view', 'empty', 'error', 'select', 'sensitivity', 'tokenCurves']);
const WEBVIEW_TYPES = new Set(['ready', 'setParams', 'resetParams', 'openRollout', 'revealInLog', 'rendered']);

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}
function isParamRecord(v: unknown): v is Record<string, number> {
  return isRecord(v) && Object.values(v).every(isFiniteNumber);
}
export function isQuestionKey(v: unknown): v is QuestionKey {
  return isRecord(v) && typeof v.runId === 'string' && isFiniteNumber(v.step) && typeof v.questionId === 'string';
}

/** Validates a message from the webview (it is untrusted input to the host). */
export function parseWebviewMessage(v: unknown): WebviewMessage | null {
  if (!isRecord(v) || typeof v.type !== 'string' || !WEBVIEW_TYPES.has(v.type)) return null;
  switch (v.type) {
    case 'ready': {
      const s = v.state;
      if (s == null) return { type: 'ready', state: null };
      if (!isRecord(s)) return { type: 'ready', state: null };
      return {
        type: 'ready',
        state: { key: isQuestionKey(s.key) ? s.key : null, params: isParamRecord(s.params) ? s.params : null },
      };
    }
    case 'setParams':
      return isFiniteNumber(v.seq) && isParamRecord(v.params) ? { type: 'setParams', seq: v.seq, params: v.params } : null;
    case 'resetParams':
      return isFiniteNumber(v.seq) ? { type: 'resetParams', seq: v.seq } : null;
    case 'openRollout':
    case 'revealInLog':
      return Number.isInteger(v.index) && (v.index as number) >= 0 ? { type: v.type, index: v.index as number } : null;
    case 'rendered':
      return isFiniteNumber(v.seq) && isFiniteNumber(v.ms) ? { type: 'rendered', seq: v.seq, ms: v.ms, ...(isFiniteNumber(v.at) ? { at: v.at } : {}) } : null;
  }
  return null;
}

export function isHostMessage(v: unknown): v is HostMessage {
  return isRecord(v) && typeof v.type === 'string' && HOST_TYPES.has(v.type);
}
