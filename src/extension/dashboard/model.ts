// The run dashboard's model (issue 6): per-step series, the regime breakdown, the recovery-region
// points of the CoRE paper's Fig. 4 and the operator agreement matrix, from the rows the what-if
// workers compute. Pure: no 'vscode', no DOM. The webview only draws these numbers.
import { OPERATOR_IDS, type OperatorId } from '../../engine';
import { agreementRates } from '../../engine/analysis/compare';
import type { DashboardData } from '../whatif/engine';

export interface DashboardStep {
  step: number;
  groups: number;
  meanGate: number;
  meanMajorityRatio: number;
  /** Per operator: questions whose label differs from the vote's. */
  overturns: Partial<Record<OperatorId, number>>;
  /** Per operator: pseudo-label accuracy against logged ground truth (absent when none is logged). */
  accuracy: Partial<Record<OperatorId, number>>;
  withTruth: number;
  /** Roll-outs whose logged reward differs from the configured operator's (a reward bug). */
  mismatches: number;
  regimes: Record<string, number>;
}

export interface RecoveryPoint {
  step: number;
  questionId: string;
  /** r = m/n* (outnumbering ratio). */
  x: number;
  /** c* over c_w: the runner-up's coherence advantage. */
  y: number;
  voteBar: number;
  confidenceBar: number;
  /** Above the confidence-lowered bar: Props. 2–3 predict the runner-up can win. */
  recoverable: boolean;
  overturn: boolean;
}

export interface DashboardModel {
  runId: string;
  groups: number;
  steps: DashboardStep[];
  regimes: Record<string, number>;
  recovery: RecoveryPoint[];
  agreement: {
    operators: OperatorId[];
    rates: (number | null)[][];
    both: number[][];
    /** Per operator: accuracy against logged ground truth (null without any) and how many groups had it. */
    accuracy: (number | null)[];
    withTruth: number[];
  };
  hasTruth: boolean;
  ms: number;
}

/** Keeps the first `max` contested points (the plot stays legible; the count is reported). */
export const MAX_RECOVERY_POINTS = 5000;

export function dashboardModel(d: DashboardData): DashboardModel {
  const steps = new Map<number, DashboardStep & { gateSum: number; ratioSum: number; correct: Partial<Record<OperatorId, number>> }>();
  const regimes: Record<string, number> = {};
  const recovery: RecoveryPoint[] = [];
  for (const r of d.rows) {
    let s = steps.get(r.step);
    if (!s) steps.set(r.step, (s = { step: r.step, groups: 0, meanGate: 0, meanMajorityRatio: 0, overturns: {}, accuracy: {}, withTruth: 0, mismatches: 0, regimes: {}, gateSum: 0, ratioSum: 0, correct: {} }));
    s.groups++;
    s.gateSum += r.gate;
    s.ratioSum += r.majorityRatio;
    s.mismatches += r.mismatches;
    s.regimes[r.regime] = (s.regimes[r.regime] ?? 0) + 1;
    regimes[r.regime] = (regimes[r.regime] ?? 0) + 1;
    const vote = r.labels.majority;
    for (const op of OPERATOR_IDS) {
      const l = r.labels[op];
      if (l === undefined || op === 'majority') continue;
      if (vote !== undefined && l !== vote) s.overturns[op] = (s.overturns[op] ?? 0) + 1;
      else s.overturns[op] ??= 0;
    }
    if (r.correct) {
      s.withTruth++;
      for (const [op, ok] of Object.entries(r.correct) as [OperatorId, boolean][]) s.correct[op] = (s.correct[op] ?? 0) + (ok ? 1 : 0);
    }
    if (r.recovery && recovery.length < MAX_RECOVERY_POINTS) {
      const v = r.recovery;
      recovery.push({ step: r.step, questionId: r.questionId, x: v.outnumbering, y: v.coherenceAdvantage, voteBar: v.voteBar, confidenceBar: v.confidenceBar, recoverable: v.margin > 0, overturn: v.overturn });
    }
  }
  const out = [...steps.values()]
    .sort((a, b) => a.step - b.step)
    .map(({ gateSum, ratioSum, correct, ...s }) => {
      const accuracy: Partial<Record<OperatorId, number>> = {};
      if (s.withTruth) for (const [op, c] of Object.entries(correct) as [OperatorId, number][]) accuracy[op] = c / s.withTruth;
      return { ...s, meanGate: s.groups ? gateSum / s.groups : 0, meanMajorityRatio: s.groups ? ratioSum / s.groups : 0, accuracy };
    });
  const a = d.agreement;
  return {
    runId: d.runId,
    groups: d.rows.length,
    steps: out,
    regimes,
    recovery,
    agreement: {
      operators: a.operators,
      rates: agreementRates(a),
      both: a.both,
      accuracy: a.withTruth.map((n, i) => (n ? a.correct[i] / n : null)),
      withTruth: a.withTruth,
    },
    hasTruth: a.withTruth.some((n) => n > 0),
    ms: d.ms,
  };
}
