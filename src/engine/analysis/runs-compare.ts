// Two runs side by side (README "Comparing runs"): per step, each run's pseudo-label accuracy
// against logged ground truth, reward accuracy, majority ratio, mean CoRE gate and groups with
// learning signal, on one step axis; each run's health alarms; and, on the questions both runs
// saw, where their labels part, with which one the logged ground truth agrees with.
// Pure: it reads the per-group health records (health-group.ts) and the run analyses
// (health.ts), so `consensus-lens compare`, the extension's compare view and the benchmark share it.
//
// Rules:
// - Each run is read with its own operator: the label, accuracy and signal are that operator's
//   (`GroupHealth.operators`). The same run under two operators is two sides with one set of records.
// - Questions are paired by question id, occurrence by occurrence in step order: the k-th time run
//   A saw a question is paired with the k-th time run B saw it (two runs over one data order pair
//   step by step; two shuffles still pair each question's epochs).
// - Labels part when they are not the same answer (answersEqual: "0.5" and "\frac12" do not
//   part), or when one run has a label and the other none. Accuracy is a diagnostic against
//   logged ground truth only; a pair without it says nothing about who was right.

import { answersEqual } from '../answers/answers';
import type { OperatorId } from '../operators/result';
import type { GroupHealth, RunHealth } from './health-types';
import type { CompareRun, CompareSeriesId, Disagreement, RunsComparison } from './runs-compare-types';
import { groupSignalShare } from './learning-signal';
import { perStep } from './run-health';

export interface RunSide {
  /** What the output calls the run (its path). */
  name: string;
  operator: OperatorId;
  records: readonly GroupHealth[];
  /** analyseRun of the same records with `configuredOperator: operator`. */
  health: RunHealth;
}

/** The per-step series of one run, along RunsComparison.steps (null where the run has no data). */
export const COMPARE_SERIES = [
  { id: 'label_accuracy', label: 'label accuracy', digits: 2 },
  { id: 'reward_accuracy', label: 'reward accuracy', digits: 2 },
  { id: 'majority_ratio', label: 'majority ratio', digits: 2 },
  { id: 'gate', label: 'mean CoRE gate', digits: 2 },
  { id: 'signal_groups', label: 'groups with signal', digits: 2 },
  { id: 'rollouts_seen', label: 'roll-outs seen (cumulative)', digits: 0 },
] as const;
export type { CompareRun, CompareSeriesId, Disagreement, RunsComparison } from './runs-compare-types';

/**
 * The records of the run a path holds: training groups only when it has any (a validation dump is
 * scored against the real answer, and its steps interleave with training's), and of a folder that
 * holds several runs the largest (named in a notice).
 */
export function trainingRecords(records: GroupHealth[], path: string, warn: (message: string) => void): GroupHealth[] {
  const training = records.filter((h) => h.stream !== 'validation');
  const use = training.length ? training : records;
  const byRun = new Map<string, GroupHealth[]>();
  for (const h of use) {
    const k = h.run ?? '';
    const l = byRun.get(k);
    if (l) l.push(h);
    else byRun.set(k, [h]);
  }
  if (byRun.size <= 1) return use;
  const [name, largest] = [...byRun.entries()].sort((x, y) => y[1].length - x[1].length)[0];
  warn(`${path} holds ${byRun.size} runs; comparing the largest, "${name}" (${largest.length} groups)`);
  return largest;
}

function mean(xs: readonly (number | null | undefined)[]): number | null {
  let s = 0;
  let k = 0;
  for (const x of xs)
    if (x !== null && x !== undefined && Number.isFinite(x)) {
      s += x;
      k++;
    }
  return k ? s / k : null;
}

/** One run's summary and series along `steps` (a single run's view uses it alone). */
export function runSummary(side: RunSide, steps: readonly number[]): CompareRun {
  const op = side.operator;
  const per = perStep(side.records);
  const healthSeries = (id: string) => {
    const s = side.health.series.find((x) => x.id === id);
    const at = new Map(side.health.steps.map((st, k) => [st, s ? s.values[k] : null]));
    return steps.map((st) => at.get(st) ?? null);
  };
  let correct = 0;
  let over = 0;
  const rewardAcc: number[] = [];
  let rollouts = 0;
  for (const h of side.records) {
    rollouts += h.n;
    const o = h.operators?.[op];
    if (!o || o.correct === null) continue;
    over++;
    if (o.correct) correct++;
    if (o.rewardAccuracy !== null) rewardAcc.push(o.rewardAccuracy);
  }
  let seen = 0;
  const cumulative = new Map<number, number>();
  for (const st of [...per.keys()].sort((a, b) => a - b)) {
    for (const h of per.get(st)!) seen += h.n;
    cumulative.set(st, seen);
  }
  const series: Record<CompareSeriesId, (number | null)[]> = {
    label_accuracy: steps.map((st) => {
      const hs = per.get(st);
      if (!hs) return null;
      const t = hs.map((h) => h.operators?.[op]?.correct).filter((c): c is boolean => c !== null && c !== undefined);
      return t.length ? t.filter(Boolean).length / t.length : null;
    }),
    reward_accuracy: steps.map((st) => mean((per.get(st) ?? []).map((h) => h.operators?.[op]?.rewardAccuracy))),
    majority_ratio: healthSeries('majority_ratio'),
    gate: healthSeries('gate'),
    signal_groups: steps.map((st) => (per.has(st) ? groupSignalShare(per.get(st)!, op) : null)),
    rollouts_seen: steps.map((st) => cumulative.get(st) ?? null),
  };
  const notes: string[] = [];
  if (!side.records.some((h) => h.operators?.[op])) notes.push(`${op} could not run on any group of ${side.name}`);
  if (!over) notes.push(`${side.name}: no logged ground truth where ${op} ran: no accuracy`);
  return {
    name: side.name,
    operator: op,
    groups: side.records.length,
    rollouts,
    steps: per.size,
    labelAccuracy: { correct, over, value: over ? correct / over : null },
    rewardAccuracy: mean(rewardAcc),
    series,
    alarms: side.health.alarms,
    notes,
  };
}

/** Each question's groups in step order (stable within a step: record order). */
function occurrences(records: readonly GroupHealth[]): Map<string, GroupHealth[]> {
  const m = new Map<string, GroupHealth[]>();
  for (const h of records) {
    const l = m.get(h.questionId);
    if (l) l.push(h);
    else m.set(h.questionId, [h]);
  }
  for (const l of m.values()) if (l.length > 1) l.sort((x, y) => x.step - y.step);
  return m;
}

const sameLabel = (a: string | null, b: string | null): boolean => (a === null || b === null ? a === b : answersEqual(a, b));

export function compareRuns(a: RunSide, b: RunSide): RunsComparison {
  const stepSet = new Set<number>();
  for (const h of a.records) stepSet.add(h.step);
  for (const h of b.records) stepSet.add(h.step);
  const steps = [...stepSet].sort((x, y) => x - y);
  const shared: RunsComparison['shared'] = { questions: 0, pairs: 0, compared: 0, agree: 0, part: 0, partWithTruth: 0, aRight: 0, bRight: 0, neitherRight: 0, withTruth: 0, aCorrect: 0, bCorrect: 0 };
  const disagreements: Disagreement[] = [];
  const occB = occurrences(b.records);
  for (const [q, as] of occurrences(a.records)) {
    const bs = occB.get(q);
    if (!bs) continue;
    shared.questions++;
    const k = Math.min(as.length, bs.length);
    for (let i = 0; i < k; i++) {
      shared.pairs++;
      const ga = as[i];
      const gb = bs[i];
      const oa = ga.operators?.[a.operator];
      const ob = gb.operators?.[b.operator];
      if (!oa || !ob) continue;
      shared.compared++;
      // Ground truth of the pair: both sides log the same question's, either may lack it.
      const ca = oa.correct;
      const cb = ob.correct;
      if (ca !== null && cb !== null) {
        shared.withTruth++;
        if (ca) shared.aCorrect++;
        if (cb) shared.bCorrect++;
      }
      if (sameLabel(oa.label, ob.label)) {
        shared.agree++;
        continue;
      }
      shared.part++;
      let agrees: Disagreement['agrees'] = null;
      if (ca !== null && cb !== null) {
        shared.partWithTruth++;
        // 'both': two labels that are not one answer yet each equivalent to the truth (the
        // numeric tolerance is not transitive) — rare, and counted for neither side.
        agrees = ca && cb ? 'both' : ca ? 'a' : cb ? 'b' : 'neither';
        if (ca && !cb) shared.aRight++;
        else if (cb && !ca) shared.bRight++;
        else if (!ca && !cb) shared.neitherRight++;
      }
      disagreements.push({ questionId: q, occurrence: i, stepA: ga.step, stepB: gb.step, labelA: oa.label, labelB: ob.label, truth: ga.groundTruth ?? gb.groundTruth ?? null, agrees });
    }
  }
  disagreements.sort((x, y) => x.stepA - y.stepA || x.stepB - y.stepB || (x.questionId < y.questionId ? -1 : x.questionId > y.questionId ? 1 : 0));
  return { format: 'consensus-lens/compare/v1', steps, runs: [runSummary(a, steps), runSummary(b, steps)], shared, disagreements };
}
