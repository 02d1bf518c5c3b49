// A group as the log layer keeps it (no texts), its version, and the one costly read of it.
//
// Identity and version. A group's identity is its key (run, step, question_id: `groupKey`). Its
// `version` comes from one process-wide counter (`nextVersion`) and is taken anew whenever the
// group is created or its roll-outs change (a late roll-out, a replaced turn, a file re-read from
// scratch): a version never goes back and is never reused, so every cache of derived data —
// prepared features in the store and in each what-if worker thread, roll-out texts in every
// thread, scores — keyed by (key, version) can never serve data of an older file.
//
// Roll-outs. A group record's roll-outs are kept in columns (`Packed`: ~20 bytes per roll-out, a
// 1 GB log holds half a million roll-outs), a group assembled from roll-out records as a list.
// `rolloutsOf(entry)` builds the roll-out objects: it is a call, never a property, so that no
// loop, JSON.stringify or structured clone builds them by accident; count with `entry.n`. Entries
// are plain data (typed arrays, arrays, objects): they cross to worker threads by structured clone.
import type { Framework, Group, OutcomeCheck, RecordSource, Rollout, Verification } from '../engine';
import { confidencesOf, type GroupKey, type LogFormat, type RolloutConfidences, type RolloutEntry, type RolloutSource } from './log-types.js';

let versions = 0;

/** The next group version: process-wide, strictly increasing. */
export function nextVersion(): number {
  return ++versions;
}

export interface GroupEntry {
  key: GroupKey;
  run?: string;
  step: number;
  questionId: string;
  prompt?: string;
  /** Diagnostics only: never an input to any operator. */
  groundTruth: string | null;
  /** Every accepted form of the ground truth when the log holds several. */
  groundTruthForms?: string[];
  /** 'validation': a validation dump (its own usual group size; no consensus rewards). */
  stream?: 'validation';
  /** The trainer that wrote the log, when its format tells. */
  framework?: Framework;
  outcomeChecks?: OutcomeCheck[];
  /** The operator the training loop logged for the group (see Group.loggedOperator). */
  loggedOperator?: string;
  /** Number of roll-outs. */
  n: number;
  /** 'group': one group record (or a TRL parquet group); 'rollouts': assembled from roll-out records. */
  origin: 'group' | 'rollouts';
  format: LogFormat;
  complete: boolean;
  /** See the header: strictly increasing, new on every change of the group's roll-outs. */
  version: number;
  /** Where the group's first record is. */
  firstSource: RolloutSource;
  /** A group record's roll-outs, in columns (read them with `rolloutsOf`). */
  packed?: Packed;
  /** Roll-outs assembled from roll-out records, in sample_idx order (read them with `rolloutsOf`). */
  list?: RolloutEntry[];
  /**
   * Set on a group restored from a persisted index and not yet needed: its roll-outs (`packed`,
   * `list`), prompt, ground-truth forms and logged operator stay in the saved file (follow/persist.ts)
   * until `RunIndex.group(key)` reads them back. Such an entry is a *head*: every other field holds.
   */
  cold?: ColdRef;
}

/** Where a cold group is in its persisted index, and what is counted without reading it. */
export interface ColdRef {
  /** The saved record (a chunk of groups) holding it. */
  chunk: number;
  /** Roll-outs with a confidence (see `confidentCount`). */
  confident: number;
}

let refChunk = -1;
let refs = new Map<number, ColdRef>();

/**
 * A cold head's ColdRef, shared by the heads of one record with the same confidence count (most of
 * a record's): a head per group is what a huge run keeps, and an object less per head is ~40 bytes
 * of it. Frozen, as it is shared; the heads of a record are made one after another, so only the last
 * record's are remembered.
 */
export function coldRef(chunk: number, confident: number): ColdRef {
  if (chunk !== refChunk) {
    refChunk = chunk;
    refs = new Map();
  }
  let r = refs.get(confident);
  if (!r) refs.set(confident, (r = Object.freeze({ chunk, confident })));
  return r;
}

/** What every holder of a group may read without loading it: a cold group's head has these. */
export type GroupHead = Omit<GroupEntry, 'packed' | 'list' | 'prompt' | 'groundTruthForms' | 'loggedOperator'>;

const coldError = (e: GroupHead) => new Error(`group ${e.key} is in the saved index, not loaded (read it with RunIndex.group)`);

/**
 * A group record's roll-outs in columns. NaN stands for a missing number. Plain data: it crosses to
 * worker threads by structured clone, typed arrays included.
 */
export interface Packed {
  base: RecordSource;
  ml: Float64Array;
  rw: Float64Array;
  si: Float64Array | null;
  answers: (string | null)[] | null;
  ver: (Verification | null)[] | null;
  extra: (Record<string, unknown> | undefined)[] | null;
  /** Per-roll-out sources when they are not items of one line (TRL parquet rows). */
  sources: RolloutSource[] | null;
  /** The label-free confidences, when some roll-out logs them. */
  conf?: (RolloutConfidences | undefined)[];
  /** Roll-outs with a confidence (a mean log-prob). */
  confident: number;
}

export function pack(rs: Array<Rollout & { extra?: Record<string, unknown> }>, base: RecordSource): Packed {
  const n = rs.length;
  const p: Packed = { base, ml: new Float64Array(n), rw: new Float64Array(n), si: null, answers: null, ver: null, extra: null, sources: null, confident: 0 };
  for (let i = 0; i < n; i++) {
    const r = rs[i];
    p.ml[i] = typeof r.meanLogprob === 'number' ? r.meanLogprob : NaN;
    if (typeof r.meanLogprob === 'number') p.confident++;
    p.rw[i] = typeof r.reward === 'number' ? r.reward : NaN;
    if (typeof r.sampleIdx === 'number') (p.si ??= new Float64Array(n).fill(NaN))[i] = r.sampleIdx;
    if (r.answer !== undefined && r.answer !== null) (p.answers ??= new Array(n).fill(null))[i] = r.answer;
    if (r.verification) (p.ver ??= new Array(n).fill(null))[i] = r.verification;
    if (r.extra) (p.extra ??= new Array(n).fill(undefined))[i] = r.extra;
    const c = confidencesOf(r);
    if (c) (p.conf ??= new Array(n).fill(undefined))[i] = c;
    const src = r.source as RolloutSource | undefined;
    if (src && (src.line !== base.line || src.offset !== base.offset || src.file !== base.file || src.item !== undefined)) (p.sources ??= rs.map((x) => x.source as RolloutSource))[i] = src;
  }
  return p;
}

/** Roll-out objects built by `rolloutsOf` since the process started (tests read it: the host must not build them on an index change). */
export const rolloutsMaterialised = { count: 0 };

/**
 * A group's roll-outs (numbers and sources, no texts), in sample_idx order when logged, else in
 * file order. For a group record this builds every roll-out object from the columns: call it once
 * per group where the roll-outs are needed, never to count them (`entry.n`).
 */
export function rolloutsOf(e: GroupEntry): RolloutEntry[] {
  if (e.cold) throw coldError(e);
  if (e.list) return e.list;
  const p = e.packed;
  if (!p) return [];
  const n = p.ml.length;
  rolloutsMaterialised.count += n;
  const out: RolloutEntry[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const ml = p.ml[i];
    const rw = p.rw[i];
    const si = p.si ? p.si[i] : NaN;
    const r: RolloutEntry = {
      meanLogprob: Number.isNaN(ml) ? null : ml,
      reward: Number.isNaN(rw) ? null : rw,
      answer: p.answers ? p.answers[i] : null,
      verification: p.ver ? p.ver[i] : null,
      sampleIdx: Number.isNaN(si) ? null : si,
      source: p.sources ? p.sources[i] : { ...p.base, item: i },
    };
    const x = p.extra?.[i];
    if (x) r.extra = x;
    const c = p.conf?.[i];
    if (c) r.confidences = c;
    out[i] = r;
  }
  return out;
}

/** Where roll-out `i` of the group is (no other roll-out built). */
export function rolloutSourceOf(e: GroupEntry, i: number): RolloutSource | undefined {
  if (e.cold) throw coldError(e);
  if (e.list) return e.list[i]?.source;
  const p = e.packed;
  if (!p || i < 0 || i >= p.ml.length || !Number.isInteger(i)) return undefined;
  return p.sources ? p.sources[i] : { ...p.base, item: i };
}

/** Roll-outs of the group with a confidence c_i (no roll-out objects built). */
export function confidentCount(e: GroupHead & Pick<GroupEntry, 'packed' | 'list'>): number {
  if (e.cold) return e.cold.confident;
  if (e.packed) return e.packed.confident;
  let n = 0;
  for (const r of e.list ?? []) if (r.meanLogprob !== null) n++;
  return n;
}

export function toRolloutEntry(r: Rollout & { extra?: Record<string, unknown> }): RolloutEntry {
  const e: RolloutEntry = {
    meanLogprob: r.meanLogprob ?? null,
    reward: r.reward ?? null,
    answer: r.answer ?? null,
    verification: r.verification ?? null,
    sampleIdx: r.sampleIdx ?? null,
    source: r.source as RolloutSource,
  };
  if (r.extra) e.extra = r.extra;
  const c = confidencesOf(r);
  if (c) e.confidences = c;
  return e;
}

/** Inserts a roll-out in sample_idx order (entries without sample_idx go last, in arrival order). */
export function insertOrdered(rs: RolloutEntry[], r: RolloutEntry): void {
  if (r.sampleIdx === null) return void rs.push(r);
  let i = rs.length;
  while (i > 0 && (rs[i - 1].sampleIdx === null || (rs[i - 1].sampleIdx as number) > r.sampleIdx)) i--;
  rs.splice(i, 0, r);
}

/** Roll-outs ordered by sample_idx when present (those without keep file order, after the others). */
export function orderRollouts<T extends { sampleIdx?: number | null }>(rs: T[]): T[] {
  if (!rs.some((r) => typeof r.sampleIdx === 'number')) return rs;
  return rs
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r.sampleIdx ?? Infinity) - (b.r.sampleIdx ?? Infinity) || a.i - b.i)
    .map((x) => x.r);
}

/**
 * A verl line that says where its ground truth comes from: TTRL's own keys (its `original_gt` is
 * the real answer; the reader never takes `gts` there) or our reward hook's (`cl_label`, `cl_gate`:
 * the reward was ours, so `gts` is the data set's answer). Without either, `gts` may be the vote.
 */
function hasTruthEvidence(extra: Record<string, unknown>): boolean {
  for (const k in extra) if (k === 'original_gt' || k === 'extracted_gt' || k === 'cl_label' || k === 'cl_gate' || k.startsWith('ttrl') || k.startsWith('majority')) return true;
  return false;
}

/** Builds the engine's Group from an index entry and its roll-out texts (`rollouts`: the entry's, when already read). */
export function entryToGroup(e: GroupEntry, texts: string[], rollouts: RolloutEntry[] = rolloutsOf(e)): Group {
  if (e.cold) throw coldError(e);
  const g: Group = {
    step: e.step,
    questionId: e.questionId,
    rollouts: rollouts.map((r, i) => {
      const ro: Rollout = { response: texts[i], meanLogprob: r.meanLogprob, reward: r.reward, source: r.source };
      if (r.answer !== null) ro.answer = r.answer;
      if (r.verification) ro.verification = r.verification;
      if (r.sampleIdx !== null) ro.sampleIdx = r.sampleIdx;
      const adv = r.extra?.advantage; // the trainer's logged advantage (TRL's table)
      if (typeof adv === 'number' && Number.isFinite(adv)) ro.advantage = adv;
      if (r.extra) (ro as Rollout & { extra?: Record<string, unknown> }).extra = r.extra;
      if (r.confidences) Object.assign(ro, r.confidences);
      return ro;
    }),
  };
  if (e.run !== undefined) g.run = e.run;
  if (e.prompt !== undefined) g.prompt = e.prompt;
  if (e.groundTruth !== null) g.groundTruth = e.groundTruth;
  if (e.groundTruthForms) g.groundTruthForms = e.groundTruthForms;
  if (e.groundTruth !== null && e.format === 'verl' && !e.stream && !rollouts.some((r) => r.extra && hasTruthEvidence(r.extra))) g.truthMayBeVote = true;
  if (e.stream) g.stream = e.stream;
  if (e.framework) g.framework = e.framework;
  if (e.outcomeChecks) g.outcomeChecks = e.outcomeChecks;
  if (e.loggedOperator) g.loggedOperator = e.loggedOperator;
  return g;
}
