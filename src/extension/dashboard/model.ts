// The run dashboard's model (issue 6): per-step series, the regime breakdown, the recovery-region
// points of the CoRE paper's Fig. 4 and the operator agreement matrix, from the rows the what-if
// workers compute. Pure: no 'vscode', no DOM. The webview only draws these numbers.
import { OPERATOR_IDS, type OperatorId } from '../../engine';
import { agreementRates } from '../../engine/analysis/compare';
import type { DashboardData } from '../whatif/engine';
import { analyseRun } from '../../engine/analysis/health';
import type { DashModel, DashRecoveryPoint, DashStep } from '../../protocol/dashboard';

// The model's shape is the dashboard protocol's: the host builds exactly what the webview draws.
export type DashboardStep = DashStep;
export type RecoveryPoint = DashRecoveryPoint;
export type DashboardModel = DashModel;

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
    // Run health (docs/health.md): the same analysis as `consensus-lens health` and the status bar.
    health: analyseRun(d.rows.flatMap((r) => (r.health ? [r.health] : []))),
  };
}
