// A followed run as the worker runtime reads it (run-wide re-scores, the dashboard's sweeps, the
// run view): its complete groups in run order (run-order.ts), and one question's group by key (the
// panel's sensitivity). Pure: no 'vscode'. The host's features hand these to the what-if engine;
// the run model never calls the workers itself (ARCHITECTURE.md: layers).
import type { QuestionKey } from '../../protocol/messages';
import type { RunItem, RunSource } from '../workers/runtime';
import type { RunEntry } from './run-entry';
import { completeItems, runItem } from './run-order';
import type { RunStore } from './run-store';

export type { RunEntry };

/** The run's complete groups in run order, as the what-if engine reads them. */
export function storeSource(_store: RunStore, run: RunEntry): RunSource {
  return { id: run.id, items: () => completeItems(run) };
}

/** One question's group as the what-if engine takes it (sent by key; its entry only when a worker lacks it). */
export function questionItem(store: RunStore, key: QuestionKey): { runId: string; item: RunItem } | undefined {
  const run = store.runs.get(key.runId);
  const k = run && store.groupKey(run, key.step, key.questionId);
  const item = k ? runItem(run!, k) : undefined;
  return item && { runId: run!.id, item };
}
