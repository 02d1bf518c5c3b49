// A followed run as the what-if engine reads it (src/extension/whatif: run-wide re-scores, the
// dashboard's sweeps): its complete groups in step order. Pure: no 'vscode'.
import type { RunEntry, RunStore } from './run-store';
import { displayQuestionId } from './run-store';
import type { RunItem, RunSource } from '../workers/whatif-engine';

export type { RunEntry };

/** The run's complete groups in step order, as the what-if engine reads them. */
export function storeSource(_store: RunStore, run: RunEntry): RunSource {
  return {
    id: run.id,
    items: () => {
      const out: RunItem[] = [];
      const index = run.index;
      if (!index) return out;
      for (const [, keys] of run.steps) {
        for (const k of keys) {
          const e = index.head(k);
          if (!e?.complete) continue;
          out.push({ key: k, version: e.version, step: e.step, questionId: displayQuestionId(e), entry: () => index.group(k) });
        }
      }
      return out;
    },
  };
}
