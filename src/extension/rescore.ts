// Re-scoring a whole run with other parameters: which pseudo-labels flip, how the gates move and,
// where ground truth is logged, whether pseudo-label accuracy changes (a diagnostic). Pure: no
// 'vscode'. Runs in slices so the extension host stays responsive; cancellable.
import { answersEqual, createRunContext, type OperatorId } from '../engine';
import type { RunEntry, RunStore } from './store';
import { score } from './scoring';
import { changedParams } from './params';

export interface Flip {
  step: number;
  questionId: string;
  before: string | null;
  after: string | null;
}

export interface RescoreReport {
  operator: OperatorId;
  changed: Record<string, number>;
  groups: number;
  flips: Flip[];
  meanGateBefore: number;
  meanGateAfter: number;
  accuracyBefore: number | null;
  accuracyAfter: number | null;
  cancelled: boolean;
  ms: number;
}

export interface RescoreHooks {
  cancelled?: () => boolean;
  progress?: (done: number, total: number) => void;
}

export async function rescoreRun(store: RunStore, run: RunEntry, before: Record<string, number>, after: Record<string, number>, operator: OperatorId, hooks: RescoreHooks = {}): Promise<RescoreReport> {
  const t0 = performance.now();
  const ctxBefore = createRunContext();
  const ctxAfter = createRunContext();
  const flips: Flip[] = [];
  let groups = 0;
  let gateBefore = 0;
  let gateAfter = 0;
  let withTruth = 0;
  let rightBefore = 0;
  let rightAfter = 0;
  let cancelled = false;
  const total = run.keys.size;
  let slice = performance.now();
  outer: for (const [, keys] of run.steps) {
    for (const k of keys) {
      if (hooks.cancelled?.()) {
        cancelled = true;
        break outer;
      }
      const key = store.keyOf(run, k);
      const g = key ? await store.get(key) : undefined;
      if (!g) continue;
      const ops: OperatorId[] = [operator];
      const a = score(g, before, operator, ctxBefore, ops).results[operator];
      const b = score(g, after, operator, ctxAfter, ops).results[operator];
      groups++;
      gateBefore += a?.gate ?? 0;
      gateAfter += b?.gate ?? 0;
      const la = a?.label ?? null;
      const lb = b?.label ?? null;
      if ((a?.labelClass ?? -1) !== (b?.labelClass ?? -1)) flips.push({ step: g.key.step, questionId: g.key.questionId, before: la, after: lb });
      const gt = g.prepared.groundTruth;
      if (gt !== null && gt !== undefined) {
        withTruth++;
        if (la !== null && safeEqual(la, gt)) rightBefore++;
        if (lb !== null && safeEqual(lb, gt)) rightAfter++;
      }
      if (performance.now() - slice > 15) {
        hooks.progress?.(groups, total);
        await new Promise((r) => setImmediate(r));
        slice = performance.now();
      }
    }
  }
  hooks.progress?.(groups, total);
  return {
    operator,
    changed: changedParams(after),
    groups,
    flips,
    meanGateBefore: groups ? gateBefore / groups : 0,
    meanGateAfter: groups ? gateAfter / groups : 0,
    accuracyBefore: withTruth ? rightBefore / withTruth : null,
    accuracyAfter: withTruth ? rightAfter / withTruth : null,
    cancelled,
    ms: performance.now() - t0,
  };
}

function safeEqual(a: string, b: string): boolean {
  try {
    return answersEqual(a, b);
  } catch {
    return a === b;
  }
}
