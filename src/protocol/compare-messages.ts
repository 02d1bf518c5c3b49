// Typed messages between the extension host and the run view (webview/compare): one run opened
// from its log file (the custom editor), or two runs — or two operators on one run — side by
// side. Imported by both sides; no 'vscode', no DOM. The webview draws what the host computed.
import type { OperatorId } from './messages';
import type { CompareRun, Disagreement, RunsComparison } from '../engine/browser';
import type { LearningSignal } from '../engine/browser';
import { isRecord } from '../util/is-record';

export const COMPARE_PROTOCOL = 1;

export interface RunViewModel {
  /** One run (a log file opened as a run) or two (a comparison). */
  runs: CompareRun[];
  runIds: string[];
  steps: number[];
  /** Per run, its learning signal (null when no group could be scored). */
  signal: (LearningSignal | null)[];
  /** Two runs only. */
  shared: RunsComparison['shared'] | null;
  /** Two runs only; the first MAX_DISAGREEMENTS by step, `disagreementsTotal` all. */
  disagreements: Disagreement[];
  disagreementsTotal: number;
}

export const MAX_DISAGREEMENTS = 2000;

/** One side of a question both runs saw, for the side-by-side panel. */
export interface PairSide {
  run: string;
  operator: OperatorId;
  step: number;
  questionId: string;
  n: number;
  label: string | null;
  groundTruth: string | null;
  gate: number;
  classes: { answer: string; size: number; isLabel: boolean; matchesGroundTruth: boolean | null }[];
}

export type CompareHostMessage =
  | { type: 'model'; model: RunViewModel }
  | { type: 'busy'; what: string | null }
  | { type: 'error'; message: string }
  | { type: 'pair'; index: number; sides: [PairSide | null, PairSide | null] };

export type CompareWebviewMessage =
  | { type: 'ready' }
  | { type: 'openPair'; index: number }
  | { type: 'openQuestion'; side: 0 | 1; step: number; questionId: string }
  | { type: 'compareWith' }
  | { type: 'openDashboard'; side: 0 | 1 };

const isSide = (v: unknown): v is 0 | 1 => v === 0 || v === 1;

/** A message from the webview, checked (anything else is dropped). */
export function parseCompareMessage(v: unknown): CompareWebviewMessage | null {
  if (!isRecord(v) || typeof v.type !== 'string') return null;
  switch (v.type) {
    case 'ready':
    case 'compareWith':
      return { type: v.type };
    case 'openPair':
      return Number.isInteger(v.index) && (v.index as number) >= 0 ? { type: 'openPair', index: v.index as number } : null;
    case 'openQuestion':
      return isSide(v.side) && typeof v.step === 'number' && Number.isFinite(v.step) && typeof v.questionId === 'string'
        ? { type: 'openQuestion', side: v.side, step: v.step, questionId: v.questionId }
        : null;
    case 'openDashboard':
      return isSide(v.side) ? { type: 'openDashboard', side: v.side } : null;
  }
  return null;
}
