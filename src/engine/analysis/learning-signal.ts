// The learning signal left (docs/health.md §6): in GRPO a group whose effective advantages are
// all zero — every roll-out rewarded alike, or a zero question gate — contributes no gradient.
// Per group, each operator's label, accuracy read-outs and the roll-outs that still teach; per
// step, the share of groups and roll-outs with signal under every operator, the saturated share
// (unanimous groups, where the vote has none) and CoRE's graded rewards against the vote.
// Pure: no I/O, no 'vscode'; health.ts calls it for the CLI, the dashboard and `compare`.

import type { PreparedGroup } from '../prepare';
import type { OperatorId, OperatorResult } from '../operators/result';
import { OPERATOR_IDS } from '../operators/ids';
import type { GroupHealth, LearningSignal, OperatorOutcome } from './health-types';

export type { LearningSignal, OperatorOutcome } from './health-types';

/** |A_i · w_q| at or below this is no signal (an all-equal group's advantages are exactly 0). */
export const SIGNAL_EPS = 1e-9;

/**
 * Roll-outs whose effective GRPO advantage A_i · w_q is non-zero (A_i of docs/contract.md#grpo-view, w_q the
 * loss weight: CoRE's / EC's gate, 1 for the voting operators).
 */
export function signalRollouts(r: OperatorResult): number {
  let k = 0;
  const w = r.lossWeight;
  for (let i = 0; i < r.advantages.length; i++) if (Math.abs(r.advantages[i] * w) > SIGNAL_EPS) k++;
  return k;
}

/**
 * One operator on one group. `truthClass`: the class equivalent to the logged ground truth (−1:
 * none is), null when the group has no ground truth (then no accuracy is counted).
 */
export function operatorOutcome(g: PreparedGroup, r: OperatorResult, truthClass: number | null): OperatorOutcome {
  let correct: boolean | null = null;
  let rewardAccuracy: number | null = null;
  if (truthClass !== null) {
    correct = r.labelClass >= 0 && r.labelClass === truthClass;
    // TTRL's reward accuracy, for this operator's label: the binary pseudo-reward (1 in the
    // label's class) equals the reward the true answer gives.
    let agree = 0;
    for (let i = 0; i < g.n; i++) {
      const inLabel = r.labelClass >= 0 && g.classOf[i] === r.labelClass;
      const right = truthClass >= 0 && g.classOf[i] === truthClass;
      if (inLabel === right) agree++;
    }
    rewardAccuracy = g.n ? agree / g.n : 0;
  }
  return { label: r.label, labelClass: r.labelClass, correct, rewardAccuracy, gate: Number.isFinite(r.gate) ? r.gate : 0, signal: signalRollouts(r) };
}

/** Every operator that ran on the group, plus the configured one when it ran separately. */
export function operatorOutcomes(g: PreparedGroup, results: Partial<Record<OperatorId, OperatorResult>>, truthClass: number | null): Partial<Record<OperatorId, OperatorOutcome>> {
  const out: Partial<Record<OperatorId, OperatorOutcome>> = {};
  for (const [id, r] of Object.entries(results) as [OperatorId, OperatorResult | undefined][]) if (r) out[id] = operatorOutcome(g, r, truthClass);
  return out;
}

/** Saturated: every roll-out gives the same answer (the vote's rewards are all equal). */
export const isSaturated = (h: GroupHealth): boolean => h.n > 0 && h.answered === h.n && h.distinct === 1;

/** Share of the step's groups with signal under `op` (null when the operator ran on none). */
export function groupSignalShare(hs: readonly GroupHealth[], op: OperatorId): number | null {
  let k = 0;
  let all = 0;
  for (const h of hs) {
    const o = h.operators?.[op];
    if (!o) continue;
    all++;
    if (o.signal > 0) k++;
  }
  return all ? k / all : null;
}

function rolloutSignalShare(hs: readonly GroupHealth[], op: OperatorId): number | null {
  let k = 0;
  let all = 0;
  for (const h of hs) {
    const o = h.operators?.[op];
    if (!o) continue;
    all += h.n;
    k += o.signal;
  }
  return all ? k / all : null;
}

/**
 * The per-step learning signal. `steps` and `byStep` are the timeline's (analyseRun's);
 * `configured` the operator the run trains with.
 */
export function learningSignal(steps: readonly number[], byStep: ReadonlyMap<number, readonly GroupHealth[]>, configured: OperatorId): LearningSignal | null {
  const present = new Set<OperatorId>();
  for (const hs of byStep.values()) for (const h of hs) for (const id of Object.keys(h.operators ?? {})) present.add(id as OperatorId);
  if (!present.size) return null;
  const operators = OPERATOR_IDS.filter((id) => present.has(id));
  const groups: LearningSignal['groups'] = {};
  const rollouts: LearningSignal['rollouts'] = {};
  const total: LearningSignal['total'] = {};
  const all = [...byStep.values()].flat();
  for (const op of operators) {
    groups[op] = steps.map((s) => groupSignalShare(byStep.get(s)!, op));
    rollouts[op] = steps.map((s) => rolloutSignalShare(byStep.get(s)!, op));
    total[op] = { groups: groupSignalShare(all, op), rollouts: rolloutSignalShare(all, op) };
  }
  const saturated = steps.map((s) => {
    const hs = byStep.get(s)!;
    return hs.length ? hs.filter(isSaturated).length / hs.length : null;
  });
  // CoRE against the vote, on the groups where both ran: the share with signal under CoRE minus
  // under the vote, and, of the saturated groups, the share where CoRE's graded rewards still teach.
  let coreVsVote: (number | null)[] | null = null;
  let saturatedCoreSignal: (number | null)[] | null = null;
  if (present.has('core') && present.has('majority')) {
    coreVsVote = steps.map((s) => {
      const both = byStep.get(s)!.filter((h) => h.operators!.core && h.operators!.majority);
      if (!both.length) return null;
      let d = 0;
      for (const h of both) d += (h.operators!.core!.signal > 0 ? 1 : 0) - (h.operators!.majority!.signal > 0 ? 1 : 0);
      return d / both.length;
    });
    saturatedCoreSignal = steps.map((s) => {
      const sat = byStep.get(s)!.filter((h) => isSaturated(h) && h.operators!.core);
      return sat.length ? sat.filter((h) => h.operators!.core!.signal > 0).length / sat.length : null;
    });
  }
  return { configured, operators, groups, rollouts, total, saturated, coreVsVote, saturatedCoreSignal };
}
