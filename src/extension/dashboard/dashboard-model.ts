// The run dashboard's model: per-step series (the operator families' rows among them: accuracy,
// learning signal, consensus–confidence agreement), the regime breakdown, the recovery-region
// points of the CoRE paper's Fig. 4 and the operator agreement matrix, from the rows the what-if
// workers compute. Pure: no 'vscode', no DOM. The webview only draws these numbers.
import { OPERATOR_FAMILIES, OPERATOR_IDS, type OperatorId } from '../../engine';
import { agreementRates } from '../../engine';
import { accuracyOf, countAccuracy, emptyAccuracy, type AccuracyCount } from '../../engine';
import type { DashboardData } from '../workers/runtime';
import { analyseRun, labelFreeCopies, type GroupHealth, type RunHealth } from '../../engine';
import type { DashModel, DashRecoveryPoint, DashStep } from '../../protocol/dashboard-messages';

// The model's shape is the dashboard protocol's: the host builds exactly what the webview draws.
export type DashboardStep = DashStep;
export type RecoveryPoint = DashRecoveryPoint;
export type DashboardModel = DashModel;

/** k of n (a share's counts). */
interface Pair {
  k: number;
  n: number;
}

const CONSENSUS_OPS = OPERATOR_IDS.filter((o) => OPERATOR_FAMILIES[o] === 'consensus');
const CONFIDENCE_OPS = OPERATOR_IDS.filter((o) => OPERATOR_FAMILIES[o] === 'confidence');

/** Keeps the first `max` contested points (the plot stays legible; the count is reported). */
export const MAX_RECOVERY_POINTS = 5000;

/** The health records of the dashboard's rows (what `health` is analysed from). */
export function dashboardRecords(d: DashboardData): GroupHealth[] {
  return d.rows.flatMap((r) => (r.health ? [r.health] : []));
}

/**
 * `health`: the run's health analysed from `dashboardRecords(d)` — the panel has it analysed on a
 * what-if worker (`RunStore.analyseHealth`: permutation tests over every question, seconds on a
 * huge run, never on the host's thread); here by default (tests, the CLI's model).
 */
export function dashboardModel(d: DashboardData, health: RunHealth = analyseRun(labelFreeCopies(dashboardRecords(d)))): DashboardModel {
  const steps = new Map<
    number,
    DashboardStep & {
      gateSum: number;
      ratioSum: number;
      correct: Partial<Record<OperatorId, AccuracyCount>>;
      taught: Partial<Record<OperatorId, Pair>>;
      agree: Partial<Record<OperatorId, Partial<Record<OperatorId, Pair>>>>;
    }
  >();
  const regimes: Record<string, number> = {};
  const recovery: RecoveryPoint[] = [];
  for (const r of d.rows) {
    let s = steps.get(r.step);
    if (!s)
      steps.set(
        r.step,
        (s = {
          step: r.step,
          groups: 0,
          meanGate: 0,
          meanMajorityRatio: 0,
          overturns: {},
          accuracy: {},
          accuracyGroups: {},
          withTruth: 0,
          mismatches: 0,
          regimes: {},
          signal: {},
          familyAgreement: {},
          gateSum: 0,
          ratioSum: 0,
          correct: {},
          taught: {},
          agree: {},
        }),
      );
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
    // The learning signal per operator: groups whose advantage is non-zero, over the groups it ran on.
    for (const [op, o] of Object.entries(r.health?.operators ?? {}) as [OperatorId, { signal: number } | undefined][]) {
      if (!o) continue;
      const t = (s.taught[op] ??= { k: 0, n: 0 });
      t.n++;
      if (o.signal > 0) t.k++;
    }
    // Consensus against confidence: the same answer class, on the questions both ran on.
    for (const c of CONSENSUS_OPS) {
      const lc = r.labels[c];
      if (lc === undefined) continue;
      for (const f of CONFIDENCE_OPS) {
        const lf = r.labels[f];
        if (lf === undefined) continue;
        const t = ((s.agree[c] ??= {})[f] ??= { k: 0, n: 0 });
        t.n++;
        if (lc === lf) t.k++;
      }
    }
    if (r.correct) {
      s.withTruth++;
      // Only the operators that ran on the question have an entry: the accuracy's denominator.
      for (const [op, ok] of Object.entries(r.correct) as [OperatorId, boolean][]) countAccuracy((s.correct[op] ??= emptyAccuracy()), ok);
    }
    if (r.recovery && recovery.length < MAX_RECOVERY_POINTS) {
      const v = r.recovery;
      recovery.push({
        step: r.step,
        questionId: r.questionId,
        x: v.outnumbering,
        y: v.coherenceAdvantage,
        voteBar: v.voteBar,
        confidenceBar: v.confidenceBar,
        recoverable: v.margin > 0,
        overturn: v.overturn,
      });
    }
  }
  const out = [...steps.values()]
    .sort((a, b) => a.step - b.step)
    .map(({ gateSum, ratioSum, correct, taught, agree, ...s }) => {
      const accuracy: Partial<Record<OperatorId, number>> = {};
      const accuracyGroups: Partial<Record<OperatorId, number>> = {};
      for (const [op, c] of Object.entries(correct) as [OperatorId, AccuracyCount][]) {
        const a = accuracyOf(c);
        if (a === null) continue;
        accuracy[op] = a;
        accuracyGroups[op] = c.over;
      }
      const signal: Partial<Record<OperatorId, number>> = {};
      for (const [op, t] of Object.entries(taught) as [OperatorId, Pair][]) signal[op] = t.k / t.n;
      const familyAgreement: DashboardStep['familyAgreement'] = {};
      for (const [c, row] of Object.entries(agree) as [OperatorId, Partial<Record<OperatorId, Pair>>][])
        for (const [f, t] of Object.entries(row) as [OperatorId, Pair][]) (familyAgreement[c] ??= {})[f] = t.k / t.n;
      return { ...s, meanGate: s.groups ? gateSum / s.groups : 0, meanMajorityRatio: s.groups ? ratioSum / s.groups : 0, accuracy, accuracyGroups, signal, familyAgreement };
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
      accuracy: a.withTruth.map((n, i) => accuracyOf({ correct: a.correct[i], over: n })),
      withTruth: a.withTruth,
    },
    hasTruth: a.withTruth.some((n) => n > 0),
    withTruth: out.reduce((t, s) => t + s.withTruth, 0),
    ms: d.ms,
    // Run health (docs/health.md): the same analysis as `consensus-lens health` and the status bar.
    health,
  };
}
