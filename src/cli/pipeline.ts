// Per-group work of `score` and `sweep`, the same in-process and in a worker thread.

import { RecordReader, decodeFeatures, preparedOf, type CachedGroup } from '../logs/cache/cached-run';
import {
  isCorrect,
  configuredOperatorOf,
  createRunContext,
  needsReasoning,
  prepareGroup,
  runOperator,
  resolveParams,
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
 * `done`: steps of the preparation already computed (see prepareGroup). A group read through the
 * run's cache has its features (or gets them, all of them, while the cache is written): preparedOf.
 */
export function scoreWith(group: Group, job: ScoreJob, ctx: RunContext, done?: PreparedParts): GroupScore {
  const c = group as CachedGroup;
  const opts = { reasoning: reasoningFor(group, job), maxGroupSize: job.maxGroupSize };
  const g = c.prepared || c.fillCache ? preparedOf(c, opts) : prepareGroup(group, opts, done);
  return scoreGroup(g, { operators: job.operators, params: job.params, configuredOperator: job.configuredOperator }, ctx);
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
  const g = preparedOf(group, { reasoning: needsReasoning(job.operators), maxGroupSize: job.maxGroupSize });
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
        st.correct = isCorrect(r.label, group) ? 1 : 0;
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

/** Worker-side state: one run context per sweep setting (or one for score), and the scans' memos. */
export class ShardState {
  private contexts: RunContext[] = [];
  /** Per scanned part of a cache file: each group's vote, and its labels' correctness. */
  readonly scans = new Map<string, ScanMemo>();
  contextsFor(count: number): RunContext[] {
    while (this.contexts.length < count) this.contexts.push(createRunContext());
    return this.contexts;
  }
}

/**
 * One setting of a sweep over persisted features (src/logs/cache): a pass over the records of a
 * cache file from byte `from` to `to`, keeping the groups whose question hash falls in `part`
 * (MS-TTRL: a question's groups on one thread, in order). The sweep is setting-major: a setting's
 * line is written as soon as every part has passed over it.
 */
export interface ScanJob {
  file: string;
  from: number;
  to: number;
  part?: { index: number; of: number };
  operators: OperatorId[];
  /** The setting and its index (one MS-TTRL outcome cache per setting). */
  params: Partial<Params>;
  setting: number;
  maxGroupSize: number;
}

export interface ScanResult {
  /** Per operator; `gateSum` is left to the caller, who adds `gates` in the run's order. */
  stats: SweepStats[];
  /** Per operator, each group's gate in this part's order (NaN: not scored): summed by the caller in the run's order, so the totals do not depend on how the run was split. */
  gates: Float64Array[];
  /** With `part`: each group's place in the run (its record's index). */
  places?: Int32Array;
  groups: number;
  /** Groups not scored (too large), reported by the pass over the first setting only. */
  failed: { message: string; file?: string; line?: number }[];
}

interface ScanMemo {
  /** Per group of the part: the vote's class (−2 not yet known, −3 no vote). */
  vote: Int32Array;
  /** Per group: label → label ≡ ground truth (answersEqual can be costly; the labels repeat across settings). */
  truth: (Map<string | null, boolean> | undefined)[];
}

/** A sweep setting over a part of a cache file: the same sums as `sweepGroup`, from the records' features. */
export function scanSetting(job: ScanJob, state: ShardState): ScanResult {
  const key = `${job.file}\0${job.from}\0${job.part?.index ?? -1}`;
  let memo = state.scans.get(key);
  if (!memo) state.scans.set(key, (memo = { vote: new Int32Array(0), truth: [] }));
  const ctx = state.contextsFor(job.setting + 1)[job.setting];
  const p = resolveParams(job.params);
  const stats = job.operators.map(emptyStats);
  const failed: ScanResult['failed'] = [];
  const reader = new RecordReader(job.file, job.from, job.to);
  let gates = job.operators.map(() => new Float64Array(256));
  let places = new Int32Array(256);
  let k = 0;
  let place = -1;
  try {
    for (let r = reader.next(); r; r = reader.next()) {
      place++;
      if (job.part && r.qhash % job.part.of !== job.part.index) continue;
      const i = k++;
      if (i >= places.length) {
        const grow = <T extends Float64Array | Int32Array>(a: T): T => {
          const b = new (a.constructor as new (n: number) => T)(2 * a.length);
          b.set(a);
          return b;
        };
        gates = gates.map(grow);
        places = grow(places);
      }
      places[i] = place;
      for (const g of gates) g[i] = Number.NaN;
      if (i >= memo.vote.length) {
        const grown = new Int32Array(Math.max(1024, 2 * memo.vote.length)).fill(-2);
        grown.set(memo.vote);
        memo.vote = grown;
      }
      const f = decodeFeatures(r.buf, r.at);
      const g = f.prepared;
      if (g.n > job.maxGroupSize) {
        if (job.setting === 0) failed.push({ message: `step ${g.step}, question ${g.questionId}: ${g.n} roll-outs, more than the group size limit of ${job.maxGroupSize} (--max-group-size, consensusLens.maxGroupSize); not scored`, ...f.firstSource });
        continue;
      }
      if (memo.vote[i] === -2) memo.vote[i] = runOperator(g, 'majority', p)?.labelClass ?? -3;
      const vote = memo.vote[i];
      const truth = g.groundTruth;
      for (let o = 0; o < job.operators.length; o++) {
        const res = runOperator(g, job.operators[o], p, ctx);
        if (!res) continue;
        const st = stats[o];
        st.groups++;
        gates[o][i] = res.gate;
        if (vote !== -3 && res.labelClass !== vote) st.flips++;
        if (truth === null || truth === undefined) continue;
        st.withTruth++;
        let m = memo.truth[i];
        if (!m) memo.truth[i] = m = new Map();
        let ok = m.get(res.label);
        if (ok === undefined) m.set(res.label, (ok = isCorrect(res.label, { groundTruth: truth, groundTruthForms: f.groundTruthForms }) === true));
        if (ok) st.correct++;
      }
    }
  } finally {
    reader.close();
  }
  const out: ScanResult = { stats, gates: gates.map((g) => g.slice(0, k)), groups: k, failed };
  if (job.part) out.places = places.slice(0, k);
  return out;
}
