// One shard of a run for run-wide what-ifs: it keeps the prepared features of its groups
// (answers, classes, within-class cosines as Float64Array — exact, never float32) between requests,
// so a re-score with a new κ/τ/α, a κ × τ sweep or the dashboard's read-outs only re-run the
// operators. A worker thread owns one shard (src/extension/workers/whatif-worker.ts); unit tests and the
// in-process fallback use the class directly. Pure Node: no 'vscode'.
//
// Memory: a group of 64 roll-outs in ~3 classes keeps ~700 cosine pairs (5.6 KB) plus its answers,
// classes, confidences, a memo of the baseline's rewards and advantages (~1 KB) and V8 object
// overhead; bench/whatif-bench.ts measured the process growing by ~590 MB for 10,000 groups after
// the first pass (that includes heap the texts of the first pass grew). Split over the worker
// threads, freed when the run is closed ('forget'). Response texts are never kept.
//
// Order: the host sends each question's groups to the same shard in step order, so MS-TTRL's
// outcome cache (one RunContext per job and setting) sees them as the training did.
import { runViewModel, sideOf } from './run-view-builder';
import type { RunViewModel } from '../../protocol/compare-messages';
import {
  OPERATOR_IDS,
  fnv1a,
  correctnessOf,
  operatorSpec,
  resolveParams,
  type Params,
  createRunContext,
  scoreGroup,
  type Group,
  type OperatorId,
  type OperatorResult,
  type PreparedGroup,
  type RunContext,
  addAgreement,
  addGroup,
  diffGroup,
  emptyAgreement,
  emptyComparison,
  type AgreementMatrix,
  type ComparisonStats,
  type GroupDiff,
  type LabelRow,
  sensitivity,
  type SensitivityInterval,
  groupHealth,
  rolloutWhatIf,
  type GroupHealth,
  analyseRun,
  labelFreeCopies,
  type RunHealth,
  type GroundTruthMode,
  engineParams,
} from '../../engine';
import { errorMessage } from '../../util/errors';
import type { GroupEntry } from '../../logs/log-layer';
import { loadGroup, prepareLoaded, previewsOf } from './load-group';

/**
 * One group of a request: its key (unique per run), version (src/logs/entries.ts: never reused, so
 * features cached under an older version are never served), and — when the shard may not have it
 * yet — how to load it.
 */
export interface WhatIfItem {
  key: string;
  version: number;
  step: number;
  questionId: string;
  /** An index entry: the shard reads the texts back from disk by offset. */
  entry?: GroupEntry;
  /** Or the group itself (benchmarks, tests, stdin runs). */
  group?: Group;
}

export interface Setting {
  operator: OperatorId;
  /** The extension's flat parameter record (the engine's engineParams, src/engine/flat-params.ts). */
  params: Record<string, number>;
}

export interface SweepCell {
  kappa: number;
  tau: number;
  groups: number;
  flips: number;
  gateSum: number;
  withTruth: number;
  correct: number;
}

/** What the dashboard needs of one group, scored with every operator at the configured parameters. */
export interface DashboardRow {
  key: string;
  step: number;
  questionId: string;
  n: number;
  regime: string;
  majorityRatio: number;
  /** CoRE's gate (1 when CoRE did not run). */
  gate: number;
  labels: LabelRow;
  /** Per operator: label ≡ logged ground truth (only when ground truth is logged). */
  correct?: Partial<Record<OperatorId, boolean>>;
  mismatches: number;
  /** Fig. 4 of the CoRE paper: present for contested questions with a runner-up of ≥ 2. */
  recovery?: { outnumbering: number; coherenceAdvantage: number; voteBar: number; confidenceBar: number; margin: number; overturn: boolean };
  /** Run health of the group (docs/health.md), the record the dashboard's health section is built from. */
  health?: GroupHealth;
}

/** A group that could not be loaded or prepared (too large, its text unreadable, …): reported, never dropped silently. */
export interface FailedItem {
  key: string;
  step: number;
  questionId: string;
  message: string;
}

export type ShardRequest =
  | { kind: 'rescore'; job: number; items: WhatIfItem[]; before: Setting; after: Setting; maxGroupSize?: number }
  | { kind: 'sweep'; job: number; items: WhatIfItem[]; operator: OperatorId; base: Record<string, number>; grid: { kappa: number; tau: number }[]; maxGroupSize?: number }
  | { kind: 'dashboard'; job: number; items: WhatIfItem[]; params: Record<string, number>; configured: OperatorId | undefined; whatifEvery?: number; maxGroupSize?: number }
  /** A question's κ and τ intervals: the group by its key (loaded when the shard lacks it, then kept). */
  | { kind: 'sensitivity'; item: WhatIfItem; params: Record<string, number> }
  /**
   * A group's features for the store (the explorer, the panel, the background scoring), through
   * the same load → prepare → cache path as every other request. `keep`: a view's group, kept
   * with its previews; the background scoring's is not kept (a first open scores every group once)
   * and needs no previews, and is served from the cache when a what-if has prepared it.
   */
  | { kind: 'prepare'; item: WhatIfItem; keep: boolean; maxGroupSize?: number }
  | { kind: 'end'; job: number }
  | { kind: 'forget'; prefix?: string }
  /** A run's health records, in parts (each part a short structured clone on the host); the last part analyses them. */
  | { kind: 'analyse'; id: number; part: GroupHealth[]; last: boolean; groundTruth?: GroundTruthMode }
  /**
   * The run view's model (run-view-builder.ts) from each side's health records, sent in parts like
   * 'analyse' (`side`: whose records `part` holds); the last part builds the model.
   */
  | { kind: 'runView'; id: number; sides: { name: string; operator: OperatorId }[]; runIds: string[]; side: number; part: GroupHealth[]; last: boolean; groundTruth?: GroundTruthMode };

export type ShardReply =
  | { kind: 'rescore'; diffs: GroupDiff[]; stats: ComparisonStats; missing: string[]; failed: FailedItem[] }
  | { kind: 'sweep'; cells: SweepCell[]; missing: string[]; failed: FailedItem[] }
  | { kind: 'dashboard'; rows: DashboardRow[]; agreement: AgreementMatrix; missing: string[]; failed: FailedItem[] }
  | { kind: 'sensitivity'; kappa: SensitivityInterval; tau: SensitivityInterval }
  | { kind: 'prepare'; prepared: PreparedGroup; previews: string[]; missing?: undefined }
  | { kind: 'prepare'; missing: true }
  | { kind: 'analysed'; health: RunHealth | null }
  | { kind: 'runView'; model: RunViewModel | null; warnings: string[] }
  | { kind: 'ok'; cached: number };

interface Cached {
  version: number;
  g: PreparedGroup;
  /** label → is it correct: the engine's one rule over every accepted form of the logged ground
   * truth (docs/contract.md#ground-truth), memoised per label; null when none is logged. */
  correct: ((label: string | null) => boolean) | null;
  /** The responses' previews, when a view asked for the group (`prepare` with `keep`). */
  previews?: string[];
  /** The baseline's result under the last baseline setting (re-scores against one baseline repeat it). */
  baseline?: { setting: string; result: OperatorResult | undefined };
}

/**
 * One operator's result exactly as scoreGroup computes it (same availability rule, same run), without
 * the theory read-outs and the mismatch check a comparison does not read.
 */
function runOperator(g: PreparedGroup, op: OperatorId, p: Params, ctx?: RunContext): OperatorResult | undefined {
  const spec = operatorSpec(op)!;
  if (g.n === 0 || spec.unavailable(g, ctx, p)) return undefined;
  return spec.run(g, p, ctx);
}

/** Operators whose result depends on the run's order (MS-TTRL's outcome cache) are never memoised. */
const memoisable = (op: OperatorId): boolean => op !== 'msttrl';

export class WhatIfShard {
  private readonly cache = new Map<string, Cached>();
  private readonly contexts = new Map<number, RunContext[]>();
  /** Health records received so far per request id ('analyse', 'runView': sent in parts), per side. */
  private readonly received = new Map<number, GroupHealth[][]>();

  /** Adds a part to what request `id` received; all of it once `last` (then forgotten here). */
  private receive(id: number, sides: number, side: number, part: GroupHealth[], last: boolean): GroupHealth[][] | null {
    let per = this.received.get(id);
    if (!per) this.received.set(id, (per = Array.from({ length: sides }, () => [])));
    const into = per[side];
    if (!into) throw new Error(`no side ${side} in request ${id}`);
    for (const h of part) into.push(h);
    if (!last) return null;
    this.received.delete(id);
    return per;
  }

  get size(): number {
    return this.cache.size;
  }

  /** The group size limit of the request being handled (consensusLens.maxGroupSize). */
  private maxGroupSize: number | undefined;

  async handle(req: ShardRequest): Promise<ShardReply> {
    if (req.kind === 'rescore' || req.kind === 'sweep' || req.kind === 'dashboard' || req.kind === 'prepare') this.maxGroupSize = req.maxGroupSize;
    switch (req.kind) {
      case 'forget':
        if (req.prefix === undefined) this.cache.clear();
        else for (const k of [...this.cache.keys()]) if (k.startsWith(req.prefix)) this.cache.delete(k);
        return { kind: 'ok', cached: this.cache.size };
      case 'end':
        this.contexts.delete(req.job);
        return { kind: 'ok', cached: this.cache.size };
      case 'sensitivity': {
        const c = await this.load(req.item);
        if (!c) throw new Error(`${req.item.questionId} (step ${req.item.step}) is not loaded in this shard`);
        return { kind: 'sensitivity', ...sensitivity(c.g, engineParams(req.params)) };
      }
      case 'analyse': {
        const all = this.receive(req.id, 1, 0, req.part, req.last);
        return { kind: 'analysed', health: all && analyseRun(labelFreeCopies(all[0], req.groundTruth)) };
      }
      case 'runView': {
        const all = this.receive(req.id, req.sides.length, req.side, req.part, req.last);
        if (!all) return { kind: 'runView', model: null, warnings: [] };
        const warnings: string[] = [];
        const sides = req.sides.map((s, i) => sideOf(s.name, s.operator, all[i], (m) => warnings.push(m), req.groundTruth));
        return { kind: 'runView', model: runViewModel(sides, req.runIds), warnings };
      }
      case 'prepare': {
        // A followed run's group for the store: the texts read back from disk, answer extraction,
        // classes, TF-IDF and the previews, all here rather than on the extension host (a run of
        // 64 × 200 KB degenerate roll-outs is seconds of work).
        const c = await this.load(req.item, { previews: req.keep, keep: req.keep });
        // sent by key and no longer held (the host's record was stale): the host sends it whole
        if (!c) return { kind: 'prepare', missing: true };
        return { kind: 'prepare', prepared: c.g, previews: c.previews ?? [] };
      }
      case 'rescore':
        return this.rescore(req);
      case 'sweep':
        return this.sweep(req);
      case 'dashboard':
        return this.dashboard(req);
    }
  }

  /**
   * The cached features of an item, loading them (load-group.ts: texts by offset, then prepare)
   * when missing or stale — the shard's one load → prepare → cache path. `previews`: also the
   * responses' previews (read again when the cached group has none); `keep: false`: not added to
   * the cache (a group already cached is served from it).
   */
  private async load(item: WhatIfItem, want: { previews?: boolean; keep?: boolean } = {}): Promise<Cached | undefined> {
    const c = this.cache.get(item.key);
    const current = c && c.version === item.version ? c : undefined;
    if (current && (!want.previews || current.previews)) return current;
    const group = item.group ?? (item.entry ? await loadGroup(item.entry, item.questionId) : undefined);
    if (!group) return current;
    const fresh: Cached = current ?? { version: item.version, g: prepareLoaded(group, this.maxGroupSize), correct: correctnessOf(group) };
    if (want.previews) fresh.previews = previewsOf(group);
    if (want.keep !== false) this.cache.set(item.key, fresh);
    return fresh;
  }

  private contextsFor(job: number, count: number): RunContext[] {
    let l = this.contexts.get(job);
    if (!l) this.contexts.set(job, (l = []));
    while (l.length < count) l.push(createRunContext());
    return l;
  }

  private async rescore(req: Extract<ShardRequest, { kind: 'rescore' }>): Promise<ShardReply> {
    const [ctxBefore, ctxAfter] = this.contextsFor(req.job, 2);
    const stats = emptyComparison();
    const diffs: GroupDiff[] = [];
    const missing: string[] = [];
    const failed: FailedItem[] = [];
    const pb = resolveParams(engineParams(req.before.params));
    const pa = resolveParams(engineParams(req.after.params));
    const baselineKey = JSON.stringify([req.before.operator, pb]);
    for (const item of req.items) {
      const c = await this.loadOrReport(item, missing, failed);
      if (!c) continue;
      const g = c.g;
      let a: OperatorResult | undefined;
      if (memoisable(req.before.operator) && c.baseline?.setting === baselineKey) a = c.baseline.result;
      else {
        a = runOperator(g, req.before.operator, pb, ctxBefore);
        if (memoisable(req.before.operator)) c.baseline = { setting: baselineKey, result: a && slim(a) };
      }
      const b = runOperator(g, req.after.operator, pa, ctxAfter);
      const d = diffGroup({ step: item.step, questionId: item.questionId, n: g.n }, a, b, c.correct);
      diffs.push(d);
      addGroup(stats, d, a, b);
    }
    return { kind: 'rescore', diffs, stats, missing, failed };
  }

  /** The item's cached features; a group that cannot be loaded or prepared goes to `failed`, one
   * no longer in the run to `missing` — reported, never dropped silently. */
  private async loadOrReport(item: WhatIfItem, missing: string[], failed: FailedItem[]): Promise<Cached | undefined> {
    try {
      const c = await this.load(item);
      if (!c) missing.push(item.key);
      return c;
    } catch (e) {
      failed.push({ key: item.key, step: item.step, questionId: item.questionId, message: errorMessage(e) });
      return undefined;
    }
  }

  private async sweep(req: Extract<ShardRequest, { kind: 'sweep' }>): Promise<ShardReply> {
    const contexts = this.contextsFor(req.job, req.grid.length);
    const cells: SweepCell[] = req.grid.map((x) => ({ ...x, groups: 0, flips: 0, gateSum: 0, withTruth: 0, correct: 0 }));
    const base = engineParams(req.base);
    const settings = req.grid.map((pt) => resolveParams({ ...base, kappa: pt.kappa, tau: pt.tau }));
    const missing: string[] = [];
    const failed: FailedItem[] = [];
    for (const item of req.items) {
      const c = await this.loadOrReport(item, missing, failed);
      if (!c) continue;
      const vote = runOperator(c.g, 'majority', settings[0] ?? resolveParams({}));
      const truth = c.correct;
      req.grid.forEach((_pt, s) => {
        const r = runOperator(c.g, req.operator, settings[s], contexts[s]);
        if (!r) return;
        const cell = cells[s];
        cell.groups++;
        cell.gateSum += r.gate;
        if (vote && r.labelClass !== vote.labelClass) cell.flips++;
        if (truth) {
          cell.withTruth++;
          if (r.label !== null && truth(r.label)) cell.correct++;
        }
      });
    }
    return { kind: 'sweep', cells, missing, failed };
  }

  private async dashboard(req: Extract<ShardRequest, { kind: 'dashboard' }>): Promise<ShardReply> {
    const [ctx] = this.contextsFor(req.job, 1);
    const params = engineParams(req.params);
    const agreement = emptyAgreement(OPERATOR_IDS);
    const rows: DashboardRow[] = [];
    const missing: string[] = [];
    const failed: FailedItem[] = [];
    for (const item of req.items) {
      const c = await this.loadOrReport(item, missing, failed);
      if (!c) continue;
      const s = scoreGroup(c.g, { params, configuredOperator: req.configured }, ctx);
      const truth = c.correct;
      const labels: LabelRow = {};
      const correct: Partial<Record<OperatorId, boolean>> = {};
      for (const op of OPERATOR_IDS) {
        const r: OperatorResult | undefined = s.results[op];
        if (!r) continue;
        labels[op] = r.labelClass;
        if (truth) correct[op] = r.label !== null && truth(r.label);
      }
      addAgreement(agreement, labels, truth ? correct : undefined);
      const a = s.analysis;
      const row: DashboardRow = {
        key: item.key,
        step: item.step,
        questionId: item.questionId,
        n: c.g.n,
        regime: c.g.n === 0 ? 'empty' : a.regime,
        majorityRatio: a.majorityRatio,
        gate: s.results.core?.gate ?? 1,
        labels,
        mismatches: s.rewardMismatch?.indices.length ?? 0,
      };
      if (truth) row.correct = correct;
      row.health = groupHealth(c.g, s, { configuredOperator: req.configured, ctx });
      // "How many roll-outs" on a sample of about 256 groups, picked by key (the same on every shard).
      if (req.whatifEvery && fnv1a(item.key) % req.whatifEvery === 0) {
        const w = rolloutWhatIf(c.g, s, params);
        if (w) row.health.whatif = w;
      }
      if (a.regime === 'contested' && a.outnumbering !== null && a.coherenceAdvantage !== null && a.voteBar !== null && a.confidenceBar !== null && a.margin !== null) {
        row.recovery = { outnumbering: a.outnumbering, coherenceAdvantage: a.coherenceAdvantage, voteBar: a.voteBar, confidenceBar: a.confidenceBar, margin: a.margin, overturn: a.overturn === true };
      }
      rows.push(row);
    }
    return { kind: 'dashboard', rows, agreement, missing, failed };
  }
}

/** What a comparison reads of a result (labels, gate, rewards, advantages): ~1 KB per group of 64. */
function slim(r: OperatorResult): OperatorResult {
  return { operator: r.operator, label: r.label, labelClass: r.labelClass, rewards: r.rewards, gate: r.gate, advantages: r.advantages, lossWeight: r.lossWeight, classScores: r.classScores };
}
