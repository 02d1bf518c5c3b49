// Run-wide what-ifs on worker threads: re-score every group of a run with another
// operator setting and compare it with the baseline, sweep a κ × τ grid, and compute the
// dashboard's per-group read-outs. The extension host only slices the run into chunks, posts them
// and merges the replies: no scoring and no TF-IDF on its event loop.
//
// Workers own shards of every run (a question always goes to the same worker, so MS-TTRL's outcome
// cache sees its steps in order) and keep the groups' prepared features between requests: the
// first request on a run reads the texts back from disk and prepares them in the workers; later
// requests (a new κ, a sweep, the dashboard) only re-run the operators. `workers: 0` runs one
// shard in-process, in slices (tests, and machines where worker threads are unavailable).
//
// Cancellation: no new chunk is posted after the hook says so; the chunks in flight (small, a few
// milliseconds each) finish and are dropped; the report says `cancelled` and callers keep their
// previous result. Pure Node: no 'vscode'.
import { errorMessage } from '../../util/errors';
import { ShardedPool } from '../../util/worker-pool';
import { join } from 'node:path';
import {
  type Group,
  type OperatorId,
  type PreparedGroup,
  type SensitivityInterval,
  emptyAgreement,
  emptyComparison,
  mergeAgreement,
  mergeComparison,
  runAccuracy,
  stepSummaries,
  type AgreementMatrix,
  type ComparisonStats,
  type GroupDiff,
  type StepSummary,
  OPERATOR_IDS,
  fnv1a,
  type GroupHealth,
  type RunHealth,
  type GroundTruthMode,
  changedParams,
} from '../../engine';
import type { GroupEntry } from '../../logs/log-layer';
import { WhatIfShard, type DashboardRow, type FailedItem, type Setting, type ShardReply, type ShardRequest, type SweepCell, type WhatIfItem } from './whatif-shard';
import type { RunViewModel } from '../../protocol/compare-messages';

/** One group of a run as the engine needs it: identity, version (src/logs/entries.ts), and how to load it when a worker lacks it. */
export interface RunItem {
  key: string;
  version: number;
  step: number;
  questionId: string;
  entry?: () => GroupEntry | undefined;
  group?: Group;
}

export interface RunSource {
  id: string;
  /** Complete groups in step order (first-record order within a step). */
  items(): RunItem[];
}

export interface Hooks {
  cancelled?: () => boolean;
  progress?: (done: number, total: number) => void;
}

export interface Flip {
  step: number;
  questionId: string;
  before: string | null;
  after: string | null;
}

export interface WhatIfReport {
  runId: string;
  operator: OperatorId;
  before: Setting;
  after: Setting;
  /** The parameters of `after` that differ from the defaults. */
  changed: Record<string, number>;
  groups: number;
  skipped: number;
  rollouts: number;
  flips: Flip[];
  /** Every group, in run order (for export). */
  diffs: GroupDiff[];
  stats: ComparisonStats;
  steps: StepSummary[];
  signChanges: number;
  meanGateBefore: number;
  meanGateAfter: number;
  /** Diagnostics from logged ground truth only (null when none is logged). */
  accuracyBefore: number | null;
  accuracyAfter: number | null;
  withTruth: number;
  cancelled: boolean;
  /** Groups that could not be loaded, prepared or sent to a worker (reported, not scored). */
  failed: FailedItem[];
  ms: number;
  /** When it finished (ms since epoch). */
  at: number;
}

export interface SweepReport {
  runId: string;
  operator: OperatorId;
  kappas: number[];
  taus: number[];
  cells: SweepCell[];
  cancelled: boolean;
  /** Groups that could not be loaded, prepared or sent to a worker (reported, not scored). */
  failed: FailedItem[];
  ms: number;
}

export interface DashboardData {
  runId: string;
  rows: DashboardRow[];
  agreement: AgreementMatrix;
  cancelled: boolean;
  /** Groups that could not be loaded, prepared or sent to a worker (reported, not scored). */
  failed: FailedItem[];
  ms: number;
}

interface Slot {
  /** The slot's thread in the pool (`shard` null), or its in-process shard. */
  index: number;
  shard: WhatIfShard | null;
  /** key → version the shard holds (as far as the host knows). */
  holds: Map<string, number>;
}

export interface EngineOptions {
  /** Worker threads (default 2; 0 = in-process). */
  workers?: number;
  /** The worker script (default: whatif-worker.js beside the extension bundle). */
  script?: string;
  execArgv?: string[];
  /** Groups per posted chunk (default 128). */
  chunk?: number;
  /** A pause after each chunk (e2e tests only: lets a click cancel a re-score of a small run). */
  delayMs?: number;
  /** The group size limit (consensusLens.maxGroupSize), read at each request. */
  maxGroupSize?: () => number | undefined;
}

export class WhatIfEngine {
  private readonly slots: Slot[];
  /** The threads (src/util/worker-pool.ts, the CLI's pool too); none in-process. */
  private readonly pool: ShardedPool | null;
  private job = 0;
  private readonly chunk: number;

  constructor(private readonly opts: EngineOptions = {}) {
    const count = opts.workers ?? 2;
    this.chunk = opts.chunk ?? 128;
    if (count <= 0) {
      this.pool = null;
      this.slots = [{ index: 0, shard: new WhatIfShard(), holds: new Map() }];
    } else {
      // Started at their first request, and idle threads never keep a process (a test, the CLI) alive.
      this.pool = new ShardedPool(count, opts.script ?? join(__dirname, 'whatif-worker.js'), { execArgv: opts.execArgv, lazy: true, unrefWhenIdle: true });
      this.slots = Array.from({ length: count }, (_, index) => ({ index, shard: null, holds: new Map() }));
      // The thread's features are gone with it: forget what it held (the pool failed what waited on
      // it, and only that: the other threads' requests are answered as usual).
      this.pool.onDeath = (i) => this.slots[i].holds.clear();
    }
  }

  get workerCount(): number {
    return this.pool?.size ?? 0;
  }

  private send(slot: Slot, req: ShardRequest): Promise<ShardReply> {
    if (slot.shard) {
      const shard = slot.shard;
      // In-process: yield to the event loop between chunks.
      return new Promise((resolve, reject) => setImmediate(() => shard.handle(req).then(resolve, reject)));
    }
    return this.pool!.submitTo<ShardReply>(slot.index, { req });
  }

  /** Posts every item to its shard in chunks (at most two in flight per shard); merges replies in run order. */
  private async run<R extends ShardReply>(
    source: RunSource,
    make: (job: number, items: WhatIfItem[]) => ShardRequest,
    onReply: (reply: R, items: WhatIfItem[], index: number[]) => void,
    hooks: Hooks,
    failed: FailedItem[] = [],
  ): Promise<boolean> {
    const job = ++this.job;
    const all = source.items();
    const total = all.length;
    const queues: { item: RunItem; index: number }[][] = this.slots.map(() => []);
    all.forEach((item, index) => queues[this.shardOf(source.id, item.questionId)].push({ item, index }));
    let done = 0;
    let cancelled = false;
    hooks.progress?.(0, total);
    await Promise.all(
      this.slots.map(async (slot, s) => {
        const q = queues[s];
        const inFlight = new Set<Promise<void>>();
        for (let start = 0; start < q.length; start += this.chunk) {
          if (cancelled || hooks.cancelled?.()) {
            cancelled = true;
            break;
          }
          const part = q.slice(start, start + this.chunk);
          const items: WhatIfItem[] = part.map(({ item }) => {
            const wi = this.wire(slot, source.id, item, false);
            slot.holds.set(wi.key, item.version);
            return wi;
          });
          const accept = (reply: ShardReply, its: WhatIfItem[], index: number[]): void => {
            for (const k of (reply as { missing?: string[] }).missing ?? []) slot.holds.delete(k);
            for (const f of (reply as { failed?: FailedItem[] }).failed ?? []) {
              slot.holds.delete(f.key);
              if (!cancelled) failed.push(f);
            }
            if (!cancelled) onReply(reply as R, its, index);
          };
          const limit = this.opts.maxGroupSize?.();
          const request = (its: WhatIfItem[]): ShardRequest => {
            const r = make(job, its);
            return limit !== undefined && (r.kind === 'rescore' || r.kind === 'sweep' || r.kind === 'dashboard') ? { ...r, maxGroupSize: limit } : r;
          };
          const p = this.send(slot, request(items))
            .then(
              (reply) =>
                accept(
                  reply,
                  items,
                  part.map((x) => x.index),
                ),
              async () => {
                // The chunk failed as a whole (a group that cannot be posted, a worker that
                // died): send its groups one by one, so one bad group is reported, not the chunk.
                for (let j = 0; j < items.length; j++) {
                  const it = items[j];
                  if (!it.group && !it.entry) {
                    // The worker may have lost it with the failed request: send it whole.
                    const src = part[j].item;
                    if (src.group) it.group = src.group;
                    else {
                      const e = src.entry?.();
                      if (e) it.entry = e;
                    }
                  }
                  try {
                    accept(await this.send(slot, request([it])), [it], [part[j].index]);
                  } catch (e) {
                    slot.holds.delete(it.key);
                    if (!cancelled) failed.push({ key: it.key, step: it.step, questionId: it.questionId, message: errorMessage(e) });
                  }
                }
              },
            )
            .then(async () => {
              if (this.opts.delayMs) await new Promise((r) => setTimeout(r, this.opts.delayMs));
              if (!cancelled) {
                done += part.length;
                hooks.progress?.(done, total);
              }
            });
          const tracked = p.finally(() => inFlight.delete(tracked));
          inFlight.add(tracked);
          if (inFlight.size >= 2) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
        await this.send(slot, { kind: 'end', job }).catch(() => undefined);
      }),
    );
    return cancelled || !!hooks.cancelled?.();
  }

  /** Re-scores every group under `after` and compares with `before` (the baseline). */
  async rescore(source: RunSource, before: Setting, after: Setting, hooks: Hooks = {}): Promise<WhatIfReport> {
    const t0 = performance.now();
    const stats = emptyComparison();
    const ordered: { index: number; d: GroupDiff }[] = [];
    const failed: FailedItem[] = [];
    const cancelled = await this.run<Extract<ShardReply, { kind: 'rescore' }>>(
      source,
      (job, items) => ({ kind: 'rescore', job, items, before, after }),
      (reply, items, index) => {
        mergeComparison(stats, reply.stats);
        // Diffs come back in item order, skipping missing and failed items.
        const missing = new Set([...reply.missing, ...(reply.failed ?? []).map((f) => f.key)]);
        let k = 0;
        items.forEach((it, j) => {
          if (!missing.has(it.key)) ordered.push({ index: index[j], d: reply.diffs[k++] });
        });
      },
      hooks,
      failed,
    );
    ordered.sort((a, b) => a.index - b.index);
    const diffs = ordered.map((x) => x.d);
    const steps = stepSummaries(stats);
    const acc = runAccuracy(stats);
    let gb = 0;
    let ga = 0;
    for (const st of Object.values(stats.steps)) {
      gb += st.gateBefore;
      ga += st.gateAfter;
    }
    return {
      runId: source.id,
      operator: after.operator,
      before,
      after,
      changed: changedParams(after.params),
      groups: stats.groups,
      skipped: stats.skipped,
      rollouts: stats.rollouts,
      flips: diffs.filter((d) => d.flipped).map((d) => ({ step: d.step, questionId: d.questionId, before: d.labelBefore, after: d.labelAfter })),
      diffs,
      stats,
      steps,
      signChanges: stats.signChanges,
      meanGateBefore: stats.groups ? gb / stats.groups : 0,
      meanGateAfter: stats.groups ? ga / stats.groups : 0,
      accuracyBefore: acc.before,
      accuracyAfter: acc.after,
      withTruth: acc.withTruth,
      cancelled,
      failed,
      ms: performance.now() - t0,
      at: Date.now(),
    };
  }

  /** κ × τ grid for one operator: flips against the vote and, with logged ground truth, accuracy. */
  async sweep(source: RunSource, operator: OperatorId, base: Record<string, number>, kappas: number[], taus: number[], hooks: Hooks = {}): Promise<SweepReport> {
    const t0 = performance.now();
    const grid = kappas.flatMap((kappa) => taus.map((tau) => ({ kappa, tau })));
    const cells: SweepCell[] = grid.map((x) => ({ ...x, groups: 0, flips: 0, gateSum: 0, withTruth: 0, correct: 0 }));
    const failed: FailedItem[] = [];
    const cancelled = await this.run<Extract<ShardReply, { kind: 'sweep' }>>(
      source,
      (job, items) => ({ kind: 'sweep', job, items, operator, base, grid }),
      (reply) => {
        reply.cells.forEach((c, i) => {
          const t = cells[i];
          t.groups += c.groups;
          t.flips += c.flips;
          t.gateSum += c.gateSum;
          t.withTruth += c.withTruth;
          t.correct += c.correct;
        });
      },
      hooks,
      failed,
    );
    return { runId: source.id, operator, kappas, taus, cells, cancelled, failed, ms: performance.now() - t0 };
  }

  /** Every group scored with every operator at the configured parameters (the dashboard's input). */
  async dashboard(source: RunSource, params: Record<string, number>, configured: OperatorId | undefined, hooks: Hooks = {}): Promise<DashboardData> {
    const t0 = performance.now();
    const agreement = emptyAgreement(OPERATOR_IDS);
    const ordered: { index: number; row: DashboardRow }[] = [];
    // Run health's roll-out subsampling on about 256 groups (WHATIF_MAX_GROUPS of the CLI).
    const whatifEvery = Math.max(1, Math.ceil(source.items().length / 256));
    const failed: FailedItem[] = [];
    const cancelled = await this.run<Extract<ShardReply, { kind: 'dashboard' }>>(
      source,
      (job, items) => ({ kind: 'dashboard', job, items, params, configured, whatifEvery }),
      (reply, items, index) => {
        mergeAgreement(agreement, reply.agreement);
        const byKey = new Map(items.map((it, j) => [it.key, index[j]]));
        for (const row of reply.rows) ordered.push({ index: byKey.get(row.key) ?? 0, row });
      },
      hooks,
      failed,
    );
    ordered.sort((a, b) => a.index - b.index);
    return { runId: source.id, rows: ordered.map((x) => x.row), agreement, cancelled, failed, ms: performance.now() - t0 };
  }

  /**
   * The slot a question of a run goes to: every request about a group — a re-score, a sweep, the
   * dashboard, a view's prepare, a sensitivity — under this one shard key, so a group is read and
   * prepared once, in one worker, and MS-TTRL's cache sees each question's steps in order.
   */
  private shardOf(runId: string, questionId: string): number {
    return fnv1a(`${runId}\u0000${questionId}`) % this.slots.length;
  }

  /** A run's group as a request carries it: its key in the shards, and how to load it unless the slot holds it at its version (`whole`: always). */
  private wire(slot: Slot, runId: string, item: RunItem, whole: boolean): WhatIfItem {
    const key = `${runId}\u0000${item.key}`;
    const wi: WhatIfItem = { key, version: item.version, step: item.step, questionId: item.questionId };
    if (whole || slot.holds.get(key) !== item.version) {
      if (item.group) wi.group = item.group;
      else {
        const e = item.entry?.();
        if (e) wi.entry = e;
      }
    }
    return wi;
  }

  /** A question's CoRE label intervals in κ and τ, computed off the host thread from the group the shard holds (sent by key). */
  async sensitivity(runId: string, item: RunItem, params: Record<string, number>): Promise<{ kappa: SensitivityInterval; tau: SensitivityInterval }> {
    const slot = this.slots[this.shardOf(runId, item.questionId)];
    const wi = this.wire(slot, runId, item, false);
    const r = await this.send(slot, { kind: 'sensitivity', item: wi, params }).catch((e) => {
      slot.holds.delete(wi.key);
      throw e;
    });
    if (r.kind !== 'sensitivity') throw new Error('unexpected reply');
    slot.holds.set(wi.key, item.version);
    return { kappa: r.kappa, tau: r.tau };
  }

  /**
   * A group's features (and, for a view, its previews) prepared on a worker thread — the worker
   * reads the texts itself — so a followed run's degenerate roll-outs never cost the extension
   * host's event loop. Under the run's shard key and cache, like every other request: a group a
   * what-if prepared is not prepared again, nor the other way round. `keep`: a view's group (kept
   * in the shard with its previews); the background scoring's is not kept.
   */
  async prepare(runId: string, item: RunItem, opts: { keep: boolean; maxGroupSize?: number }): Promise<{ prepared: PreparedGroup; previews: string[] }> {
    const slot = this.slots[this.shardOf(runId, item.questionId)];
    const size = opts.maxGroupSize !== undefined ? { maxGroupSize: opts.maxGroupSize } : {};
    // A view wants previews, which the shard may not have kept: its entry goes whole. The
    // background scoring's goes by key when the shard holds the group.
    let wi = this.wire(slot, runId, item, opts.keep);
    let r = await this.send(slot, { kind: 'prepare', item: wi, keep: opts.keep, ...size });
    if (r.kind === 'prepare' && r.missing) {
      slot.holds.delete(wi.key);
      wi = this.wire(slot, runId, item, true);
      r = await this.send(slot, { kind: 'prepare', item: wi, keep: opts.keep, ...size });
    }
    if (r.kind !== 'prepare' || r.missing) throw new Error('unexpected reply');
    if (opts.keep) slot.holds.set(wi.key, item.version);
    return { prepared: r.prepared, previews: r.previews };
  }

  private analyses = 0;

  /**
   * Health records to a worker thread in parts (each a short structured clone on the host, the
   * host yielding between them), one list after the other; the reply to the last part is the
   * answer. `request` makes each part's request (`side`: which list it is from).
   */
  private async inParts(lists: readonly (readonly GroupHealth[])[], request: (part: GroupHealth[], side: number, last: boolean) => ShardRequest): Promise<ShardReply> {
    const PART = 500;
    // at least one part per list (an empty one still needs its place)
    const parts: { side: number; from: number }[] = [];
    lists.forEach((l, side) => {
      for (let from = 0; from === 0 || from < l.length; from += PART) parts.push({ side, from });
    });
    if (!parts.length) throw new Error('no records to send');
    for (let i = 0; ; i++) {
      const { side, from } = parts[i];
      const last = i === parts.length - 1;
      const r = await this.send(this.slots[0], request(lists[side].slice(from, from + PART), side, last));
      if (last) return r;
      await new Promise((res) => setImmediate(res));
    }
  }

  /**
   * A run's health (docs/health.md) analysed on a worker thread: the analysis runs permutation
   * tests over every step, seconds on a long run, which the extension host must not spend.
   */
  async analyse(records: readonly GroupHealth[], groundTruth: GroundTruthMode = 'auto'): Promise<RunHealth> {
    const id = ++this.analyses;
    const r = await this.inParts([records], (part, _side, last) => ({ kind: 'analyse', id, part, last, groundTruth }));
    if (r.kind !== 'analysed' || !r.health) throw new Error('the analysis gave nothing');
    return r.health;
  }

  /**
   * The run view's model (run-view-builder.ts: each side's health analysed — permutation tests —, the
   * two runs compared) built on a worker thread, for the same reason as `analyse`. `warnings`: what
   * the model's reading of the records noticed (trainingRecords).
   */
  async runView(
    sides: { name: string; operator: OperatorId; records: readonly GroupHealth[] }[],
    runIds: string[],
    groundTruth: GroundTruthMode = 'auto',
  ): Promise<{ model: RunViewModel; warnings: string[] }> {
    const id = ++this.analyses;
    const heads = sides.map((s) => ({ name: s.name, operator: s.operator }));
    const r = await this.inParts(
      sides.map((s) => s.records),
      (part, side, last) => ({ kind: 'runView', id, sides: heads, runIds, side, part, last, groundTruth }),
    );
    if (r.kind !== 'runView' || !r.model) throw new Error('the run view gave nothing');
    return { model: r.model, warnings: r.warnings };
  }

  /** Frees a run's features in every shard (the run was closed). */
  async forget(runId: string): Promise<void> {
    const prefix = `${runId}\u0000`;
    await Promise.all(
      this.slots.map(async (slot) => {
        for (const k of [...slot.holds.keys()]) if (k.startsWith(prefix)) slot.holds.delete(k);
        if (slot.shard || this.pool?.thread(slot.index)) await this.send(slot, { kind: 'forget', prefix }).catch(() => undefined);
      }),
    );
  }

  async dispose(): Promise<void> {
    await this.pool?.close();
  }
}
