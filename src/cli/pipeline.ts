// Per-group work of `score` and `sweep`, the same in-process and in a worker thread.

import {
  answersEqual,
  configuredOperatorOf,
  createRunContext,
  needsReasoning,
  prepareGroup,
  scoreGroup,
  scoreToJson,
  type Group,
  type GroupAnswers,
  type GroupScore,
  type OperatorId,
  type Params,
  type RunContext,
} from '../engine';

type PreparedParts = { answers?: GroupAnswers; cosines?: Float64Array[] };

export interface ScoreJob {
  /** Largest group scored (default DEFAULT_MAX_GROUP_SIZE). */
  maxGroupSize?: number;
  operators?: OperatorId[];
  params: Partial<Params>;
  configuredOperator?: OperatorId;
}

/**
 * Is `label` the logged ground truth? Every accepted form counts (verl `gts` lists such as
 * ["\\frac{3}{4}", "0.75"]). null when no ground truth is logged (a diagnostic, never an input).
 */
export function matchesTruth(label: string | null, truth: string | null | undefined, forms?: readonly string[]): boolean | null {
  if (truth === null || truth === undefined) return null;
  if (label === null) return false;
  const all = forms && forms.length ? forms : [truth];
  return all.some((t) => answersEqual(label, t));
}

/** `done`: steps of the preparation already computed (see prepareGroup). */
export function scoreWith(group: Group, job: ScoreJob, ctx: RunContext, done?: PreparedParts): GroupScore {
  return scoreGroup(prepareGroup(group, { reasoning: reasoningFor(group, job), maxGroupSize: job.maxGroupSize }, done), { operators: job.operators, params: job.params, configuredOperator: job.configuredOperator }, ctx);
}

/** The reasoning cosines are needed by the operators asked for, or by the configured one (the mismatch check). */
export function reasoningFor(group: Group, job: { operators?: OperatorId[]; configuredOperator?: OperatorId }): boolean {
  return needsReasoning(job.operators) || needsReasoning([configuredOperatorOf(group, job.configuredOperator)]);
}

export function scoreLine(group: Group, job: ScoreJob, ctx: RunContext, done?: PreparedParts): string {
  return JSON.stringify(scoreToJson(scoreWith(group, job, ctx, done)));
}

/** Per (setting, operator): the sums `sweep` reports. */
export interface SweepStats {
  groups: number;
  flips: number;
  gateSum: number;
  withTruth: number;
  correct: number;
}

export interface SweepJob {
  maxGroupSize?: number;
  settings: Partial<Params>[];
  operators: OperatorId[];
}

export const emptyStats = (): SweepStats => ({ groups: 0, flips: 0, gateSum: 0, withTruth: 0, correct: 0 });

/**
 * Scores one group under every setting, reusing its features (answers, classes, cosines) across
 * settings: only the operators' own work is repeated. `contexts[s]` carries MS-TTRL's cache.
 */
export function sweepGroup(group: Group, job: SweepJob, contexts: RunContext[]): SweepStats[][] {
  const g = prepareGroup(group, { reasoning: needsReasoning(job.operators), maxGroupSize: job.maxGroupSize });
  const vote = scoreGroup(g, { operators: ['majority'] }).results.majority;
  const truth = g.groundTruth;
  return job.settings.map((params, s) => {
    const score = scoreGroup(g, { operators: job.operators, params }, contexts[s]);
    return job.operators.map((op) => {
      const st = emptyStats();
      const r = score.results[op];
      if (!r) return st;
      st.groups = 1;
      st.gateSum = r.gate;
      st.flips = vote && r.labelClass !== vote.labelClass ? 1 : 0;
      if (truth !== null && truth !== undefined) {
        st.withTruth = 1;
        st.correct = matchesTruth(r.label, truth, group.groundTruthForms) ? 1 : 0;
      }
      return st;
    });
  });
}

export function addStats(into: SweepStats[][], add: SweepStats[][]): void {
  for (let s = 0; s < into.length; s++) {
    for (let o = 0; o < into[s].length; o++) {
      const a = into[s][o];
      const b = add[s][o];
      a.groups += b.groups;
      a.flips += b.flips;
      a.gateSum += b.gateSum;
      a.withTruth += b.withTruth;
      a.correct += b.correct;
    }
  }
}

/** Worker-side state: one run context per sweep setting (or one for score). */
export class ShardState {
  private contexts: RunContext[] = [];
  contextsFor(count: number): RunContext[] {
    while (this.contexts.length < count) this.contexts.push(createRunContext());
    return this.contexts;
  }
}
