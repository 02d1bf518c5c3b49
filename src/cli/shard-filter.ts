// `--shard i/K` of `score` and `sweep`: the part of a run one task of a cluster run scores
// (docs/scale.md#sharding). A question belongs to bucket FNV-1a(question id) mod K, so all of
// its steps are scored by one task, in order (MS-TTRL's per-question outcome cache sees exactly
// what it sees on one machine). Every task reads the whole run and scores its own questions.
//
// A shard's output is made to be merged, never averaged: `score` lines carry the group's ordinal
// in the run (the driver restores the run order), `sweep` lines carry counts and sums, and a last
// line says how many groups the task read and owned, so the driver can check that the shards
// covered the run exactly once.

import { type Group, fnv1a } from '../engine';
import { UsageError } from './args';
import type { SweepStats } from './pipeline';

export interface Shard {
  index: number;
  count: number;
}

/** Largest K: more buckets than this only multiplies the reading of the run. */
export const MAX_SHARDS = 100000;

/** `i/K`, decimal integers, 0 ≤ i < K ≤ MAX_SHARDS. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !(count >= 1 && count <= MAX_SHARDS) || !(index < count)) {
    throw new UsageError(`--shard ${text}: expected i/K with 0 ≤ i < K ≤ ${MAX_SHARDS} (e.g. 0/8)`);
  }
  return { index, count };
}

/** The bucket of a question: FNV-1a of its id (UTF-16 code units, src/util/hash.ts) mod K. */
export function bucketOf(questionId: string, count: number): number {
  return fnv1a(questionId) % count;
}

/**
 * Follows one shard through a run: `keep` is forEachGroup's filter (every group read passes through
 * it, in run order), `ordinal` a kept group's place among all the groups of the run.
 */
export class ShardFilter {
  read = 0;
  owned = 0;
  private readonly ordinals = new WeakMap<Group, number>();
  constructor(readonly shard: Shard) {}

  keep = (g: Group): boolean => {
    const n = this.read++;
    if (bucketOf(g.questionId, this.shard.count) !== this.shard.index) return false;
    this.owned++;
    this.ordinals.set(g, n);
    return true;
  };

  ordinal(g: Group): number {
    const n = this.ordinals.get(g);
    if (n === undefined) throw new Error(`step ${g.step}, question ${g.questionId}: not a group of shard ${this.label()}`);
    return n;
  }

  label(): string {
    return `${this.shard.index}/${this.shard.count}`;
  }

  /** The last line of a shard's output. */
  trailer(): string {
    return JSON.stringify({ shard: this.label(), read: this.read, owned: this.owned });
  }
}

/** A `score` line of a shard: the line `score` prints, wrapped with the group's ordinal. */
export function shardScoreLine(ordinal: number, line: string): string {
  return `{"seq":${ordinal},"score":${line}}`;
}

/** How often (own groups scored) a sweep shard reports its progress. */
export const SWEEP_PROGRESS_EVERY = 64;

export function sweepProgressLine(done: number, read: number): string {
  return JSON.stringify({ progress: { done, read } });
}

/** A `sweep` line of a shard: the sums behind `mean_gate` and `label_accuracy`, not the ratios. */
export function shardSweepLine(params: unknown, operator: string, t: SweepStats): string {
  return JSON.stringify({
    params,
    operator,
    groups: t.groups,
    flips_vs_majority: t.flips,
    gate_sum: t.gateSum,
    with_truth: t.withTruth,
    correct: t.correct,
  });
}
