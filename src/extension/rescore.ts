// Re-scoring a whole run with other parameters (consensusLens.rescoreRun): every group is
// scored under the baseline (the configured parameters) and the new setting in worker threads
// (src/extension/whatif), on features cached in the workers; the report lists the questions whose
// pseudo-label flips (by answer class), the shift of rewards, advantages and gates, the roll-outs
// whose advantage changes sign and — where ground truth is logged — pseudo-label accuracy before
// and after, per step (a diagnostic). Pure: no 'vscode'. Cancellable through the hooks.
import type { OperatorId } from '../engine';
import type { RunEntry, RunStore } from './store';
import { displayQuestionId } from './store';
import { WhatIfEngine, type Hooks, type RunItem, type RunSource, type WhatIfReport } from './whatif/engine';

export type { Flip, WhatIfReport as RescoreReport } from './whatif/engine';
export type RescoreHooks = Hooks & {
  /** The worker-thread engine; without one, an in-process engine (one shard, sliced). */
  engine?: WhatIfEngine;
};

/** The run's complete groups in step order, as the what-if engine reads them. */
export function storeSource(store: RunStore, run: RunEntry): RunSource {
  return {
    id: run.id,
    items: () => {
      const out: RunItem[] = [];
      const index = run.index;
      if (!index) return out;
      for (const [, keys] of run.steps) {
        for (const k of keys) {
          const e = index.group(k);
          if (!e || !e.complete) continue;
          out.push({ key: k, version: e.version, step: e.step, questionId: displayQuestionId(e), entry: () => index.group(k) });
        }
      }
      return out;
    },
  };
}

let fallback: WhatIfEngine | undefined;

export async function rescoreRun(store: RunStore, run: RunEntry, before: Record<string, number>, after: Record<string, number>, operator: OperatorId, hooks: RescoreHooks = {}): Promise<WhatIfReport> {
  const engine = hooks.engine ?? (fallback ??= new WhatIfEngine({ workers: 0 }));
  return engine.rescore(storeSource(store, run), { operator, params: before }, { operator, params: after }, hooks);
}

