// The host's store of followed runs, on the log layer's RunIndex (src/logs): the index keeps each
// group's numbers and record offsets (never texts), follows the files live, and says which groups
// were added, completed, changed or removed. On top of it this store keeps
//   - the step → question index the explorer walks lazily (no scoring on expansion);
//   - prepared groups (features computed once, texts read back from disk on demand), cached;
//   - per-question summaries (regime, overturn, gate, mismatches) scored in the background, in
//     slices, in step order (MS-TTRL's outcome cache follows the steps).
// With `persistDir` (the extension's global storage) each run's index and summaries are saved once
// it is scored and quiet, and a reopened run is restored from them (src/logs/follow/persist.ts).
// Pure Node: no 'vscode', so unit tests drive it directly.
// Long file: one state machine per run (open, change, background scoring in step order, save,
// reopen after a corrupt saved index) whose steps read and write the same entry and must stay in order.
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { errorMessage } from '../../util/errors';
import {
  analyseRun,
  createRunContext,
  engineParams,
  labelFreeCopies,
  outcomeReplay,
  resolveParams,
  type OutcomeReplay,
  type Params,
  type GroupHealth,
  type OperatorId,
  type PreparedGroup,
  type RunContext,
  type RunHealth,
} from '../../engine';
import {
  RunIndex,
  SAVED_EXTRA,
  entryToGroup,
  groupKey,
  rolloutsOf,
  runLabel,
  type GroupEntry,
  type GroupHead,
  type GroupKey,
  type GroupSize,
  type Notice,
  type RunChange,
  type RunProgress,
} from '../../logs';
import type { QuestionKey } from '../../protocol/messages';
import { packSummaries, QuestionSummaries } from './summaries';
import { StepKeys, type KeyOf } from './step-keys';
import { lightSummary, score, storeGroup, summarize, type QuestionSummary, type StoredGroup } from './scoring';
import { safeText } from '../../logs/safe-text';
import { cacheKey } from '../../logs/cache/index';
import { TimeSlice } from '../../util/slice';

export interface RunEntry {
  id: string;
  path: string;
  label: string;
  /** Why the run is followed. */
  origin: 'settings' | 'workspace' | 'opened';
  index: RunIndex | null;
  /** Steps ascending; each with its question keys (the index's group keys, as ids: step-keys.ts) in first-record order. */
  steps: Map<number, StepKeys>;
  /** Groups in the run (every step's questions). */
  groups: number;
  /** Keyed by the index's group key, valid for the group's version only (src/logs/entries.ts). */
  prepared: Map<GroupKey, { version: number; group: StoredGroup }>;
  /**
   * Groups that could not be prepared → the version that failed: reported once, and the background
   * scoring leaves them until their roll-outs change (opening one tries again).
   */
  unprepared: Map<GroupKey, number>;
  /** Scored questions' summaries (light ones in columns: summaries.ts). */
  summaries: QuestionSummaries;
  /**
   * Per scored group that MS-TTRL's outcome cache concerns (it has outcome checks, or its question
   * had a cache when it was scored): the question's cache it was scored with (`seen`, a
   * fingerprint) and what its checks feed the cache. The background scoring walks the run in
   * order and scores such a group again only when the cache before it is not `seen`.
   */
  outcomes: Map<GroupKey, { questionId: string; seen: string; replay?: OutcomeReplay }>;
  notices: Notice[];
  loading: boolean;
  error: string | null;
  /** Bumped on every change (the status bar and tests compare it). */
  version: number;
  rollouts: number;
  /** The last step that received a group. */
  latestStep: number | null;
  /** The first read's progress, while it runs (its groups appear as they are read). */
  progress?: RunProgress;
  /** The store's growth clock when groups were last added to the run after it was first read
   * (0: it has not grown since). The run with the highest is the one being written. */
  grownAt: number;
  /** `version` when the run's index was last saved or restored as it is (see StoreOptions.persistDir). */
  savedVersion?: number;
  /** The run's health as saved with its index, while the run is as restored (the status bar starts from it). */
  savedHealth?: { size: number; health: RunHealth };
}

export type StoreEvent = { kind: 'runs' } | { kind: 'run'; runId: string; changed: string[] } | { kind: 'summaries'; runId: string };

export interface StoreOptions {
  /** The operator the user named (undefined: each group's logged one, else majority). */
  configuredOperator: () => OperatorId | undefined;
  params: () => Record<string, number>;
  log?: (message: string) => void;
  /** Information for the output (how a run was opened). */
  info?: (message: string) => void;
  /** Passed to RunIndex (tests use small values). */
  pollMs?: number;
  streamMs?: number;
  idleMs?: number;
  /** Follow files (default true). */
  follow?: boolean;
  /** The `consensusLens.groundTruth` setting: 'ignore' drops logged ground truth as runs are read. */
  groundTruth?: () => 'auto' | 'use' | 'ignore';
  /**
   * Prepares a group off the host thread (the what-if engine's workers); without it groups are
   * prepared in-process (tests).
   */
  prepare?: (entry: GroupEntry, questionId: string) => Promise<{ prepared: PreparedGroup; previews: string[] }>;
  /**
   * The folder of persisted indexes (VS Code's storage; undefined: none): a run's index and its
   * questions' summaries are saved there once scored, and a second open of the run reads them
   * instead of its logs (src/logs/follow/persist.ts).
   */
  persistDir?: () => string | undefined;
  /** Quiet time after the last change before a run's index is saved again (ms; default 5000). */
  saveDelayMs?: number;
  /**
   * Groups held in memory and not yet saved — read and not saved (their roll-out columns), or
   * scored and not saved (their summaries with their health records), ~3 KB each — past which a
   * run's index is saved at once, without waiting for the run to be quiet (a checkpoint; default
   * 16,384): a first open of a huge run then holds a bounded part of it, not all of it until its end.
   */
  checkpointGroups?: number;
  /** Bytes read from a log file at a time (RunIndexOptions.readBlock; tests). */
  readBlock?: number;
  /** Analyses a run's health off the host thread (the what-if engine's workers); without it, in-process (tests). */
  analyse?: (records: readonly GroupHealth[]) => Promise<RunHealth>;
}

/** Groups the background scoring has being prepared ahead of the one it scores (one per worker thread, and one more). */
const PREPARE_AHEAD = 3;

/** How many prepared groups (features, similarities, previews; no texts: ~40 KB each) a run keeps, the most recently used. */
export const PREPARED_CACHE = 500;

export const questionKeyString = (step: number, questionId: string): string => `${step}\u0000${questionId}`;

/** The question id shown for an index entry (sub-runs of a folder prefix their folder). */
export function displayQuestionId(e: Pick<GroupEntry, 'run' | 'questionId'>): string {
  return e.run ? `${e.run}/${e.questionId}` : e.questionId;
}

export class RunStore {
  readonly runs = new Map<string, RunEntry>();
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly opening = new Map<string, Promise<void>>();
  private summaryGeneration = 0;
  private summaryRunning = false;
  private summaryAgain = false;
  private disposed = false;
  private clock = 0;

  constructor(private readonly opts: StoreOptions) {}

  onChange(fn: (e: StoreEvent) => void): { dispose(): void } {
    this.listeners.add(fn);
    return { dispose: () => this.listeners.delete(fn) };
  }

  private emit(e: StoreEvent): void {
    for (const fn of this.listeners) {
      try {
        fn(e);
      } catch (err) {
        this.opts.log?.(`listener failed: ${errorMessage(err)}`);
      }
    }
  }

  /** Follows a run (folder or file). Returns the entry at once; its index opens in the background. */
  add(path: string, origin: RunEntry['origin']): RunEntry {
    const id = resolve(path);
    const existing = this.runs.get(id);
    if (existing) return existing;
    const run: RunEntry = {
      id,
      path: id,
      label: runLabel(id),
      origin,
      index: null,
      steps: new Map(),
      groups: 0,
      prepared: new Map(),
      unprepared: new Map(),
      outcomes: new Map(),
      // kept under the group ids of the run's index (no key per summary); `run` is assigned below
      summaries: new QuestionSummaries(() => run.index?.keyIds),
      notices: [],
      loading: true,
      error: null,
      version: 0,
      rollouts: 0,
      latestStep: null,
      grownAt: 0,
    };
    this.runs.set(id, run);
    this.emit({ kind: 'runs' });
    this.opening.set(
      id,
      this.open(run).finally(() => this.opening.delete(id)),
    );
    return run;
  }

  /** The persisted index of a run, when persisting (one file per run and ground-truth setting). */
  private persistFile(run: RunEntry): { file: string; key: string } | undefined {
    const dir = this.opts.persistDir?.();
    if (!dir) return undefined;
    const key = cacheKey(run.path, { groundTruth: this.opts.groundTruth?.() ?? 'auto', index: 'followed' });
    return { file: join(dir, `${key}.cli`), key };
  }

  /** What the summaries were scored with: saved with them, they are restored only for the same. */
  private summaryTag(): string {
    return createHash('sha1')
      .update(JSON.stringify([this.opts.configuredOperator() ?? null, Object.entries(this.opts.params()).sort()]))
      .digest('hex');
  }

  /**
   * Reads every run again under a changed reading option (consensusLens.groundTruth): each from its
   * index saved under the new option when there is one (the saved file is per option), else its logs.
   */
  reread(): void {
    for (const run of [...this.runs.values()]) this.reopen(run);
  }

  /** Reads a run again from its logs, its saved index not trusted (`why`): a record of it was found corrupt after the open. */
  private reopen(run: RunEntry, why?: string): void {
    if (this.disposed || this.runs.get(run.id) !== run) return;
    run.index?.close();
    run.index = null;
    this.heldAfterCheckpoint.delete(run.id);
    run.prepared.clear();
    run.unprepared.clear();
    run.summaries.clear();
    run.outcomes.clear();
    run.savedHealth = undefined;
    run.savedVersion = undefined;
    run.loading = true;
    this.opening.set(
      run.id,
      this.open(run, why).finally(() => this.opening.delete(run.id)),
    );
  }

  private async open(run: RunEntry, distrust?: string): Promise<void> {
    let started: RunIndex | undefined;
    try {
      const found = this.persistFile(run);
      // Each saved light summary goes to a row of columns as it is decoded (QuestionSummaries.stagePacked;
      // `stage` for an index saved before the summaries were packed).
      // `let`, dropped after the adoption below: the closures made here share one context, and the
      // index keeps `onNotice` for the run's life, which would keep the staging columns with it.
      let staged: QuestionSummaries | undefined = new QuestionSummaries();
      const persist = found && {
        ...found,
        distrust,
        lightIn: (x: unknown) => staged?.stage(x as QuestionSummary),
        lightUnpack: (p: unknown) => staged?.stagePacked(p) ?? [],
      };
      let lastProgress = 0;
      const index = await RunIndex.open(run.path, {
        persist,
        follow: this.opts.follow ?? true,
        // The first read streams: its groups are arranged and scored as they are read (a change
        // every second or file), so the questions of a huge run appear as their steps are indexed.
        onStart: (idx) => {
          if (this.disposed || this.runs.get(run.id) !== run) return;
          run.index = started = idx;
          idx.onDidChange((ch) => this.onIndexChange(run, ch));
        },
        onProgress: (p) => {
          run.progress = p;
          if (Date.now() - lastProgress < 500) return;
          lastProgress = Date.now();
          this.emit({ kind: 'run', runId: run.id, changed: [] });
        },
        streamMs: this.opts.streamMs,
        readBlock: this.opts.readBlock,
        onNotice: (n) => {
          run.notices.push(n);
          if (run.notices.length > 500) run.notices.shift();
          if (n.level !== 'info') this.opts.log?.(safeText(`${run.label}: ${n.message}`));
        },
        pollMs: this.opts.pollMs,
        idleMs: this.opts.idleMs,
        groundTruth: this.opts.groundTruth?.() ?? 'auto',
      });
      run.progress = undefined;
      if (this.disposed || this.runs.get(run.id) !== run || run.index !== index) return index.close();
      index.onSavedCorrupt((why) => this.reopen(run, why));
      await this.rebuildSliced(run);
      // the summaries saved with the index, for its groups restored unchanged (same settings)
      // (light: each health record stays on disk with its group, read back by `healthRecords`)
      const slice = new TimeSlice();
      run.summaries.reserve(index.size);
      for (const [id, v] of index.restoredExtras(this.summaryTag())) {
        run.summaries.adopt(id, staged, v as number | QuestionSummary);
        if (slice.due) await slice.next();
      }
      staged = undefined;
      const p = index.persisted;
      if (p.state === 'restored')
        this.opts.info?.(
          `${run.label}: opened from its saved index (${p.trusted} files as saved or appended to, ${p.reread} read again; ${index.bytesReadAtOpen} log bytes read, ${run.summaries.size} of ${index.size} questions' summaries restored)`,
        );
      run.error = run.steps.size === 0 ? (run.notices.find((n) => n.level === 'error')?.message ?? null) : null;
    } catch (err) {
      run.error = errorMessage(err);
      if (started && run.index === started) run.index = null; // started, and its first read failed (closed)
      run.progress = undefined;
    }
    run.loading = false;
    run.version++;
    // Restored as saved (nothing read from the logs, every complete question's summary back, under
    // these settings): nothing to score again — not even the questions with outcome checks, whose
    // summaries were scored in step order over these very groups — and nothing new to save.
    const p = run.index?.persisted;
    const asSaved = p?.state === 'restored' && p.reread === 0 && run.index!.bytesReadAtOpen === 0 && (await this.everySummary(run));
    if (asSaved) {
      run.savedVersion = run.version;
      const h = run.index!.restoredRunExtra(this.summaryTag()) as RunEntry['savedHealth'];
      if (h && h.size === run.summaries.size) run.savedHealth = h;
    }
    this.emit({ kind: 'run', runId: run.id, changed: [] });
    if (!asSaved) this.markForRescore(run.id);
    this.scheduleSummaries();
  }

  /**
   * Runs that changed (or whose settings did) since their last scoring pass: that pass checks the
   * scored groups it has no outcome record of (`RunEntry.outcomes`: restored ones) for what
   * MS-TTRL's cache concerns. Other runs' passes skip their scored groups without building a head.
   * Value: a change count.
   */
  private readonly rescoreAll = new Map<string, number>();
  private markForRescore(id: string): void {
    this.rescoreAll.set(id, (this.rescoreAll.get(id) ?? 0) + 1);
  }

  /** A checkpoint per run in progress (`checkpointGroups`). */
  private readonly checkpoints = new Map<string, Promise<number>>();
  /** Per run: what was held unsaved after its last checkpoint (what a save cannot let go of: groups not complete). */
  private readonly heldAfterCheckpoint = new Map<string, number>();

  /** Saves the run's index at once when `checkpointGroups` more of it are held in memory unsaved than after the last checkpoint. */
  private checkpointIfDue(run: RunEntry): void {
    const index = run.index;
    if (!index || this.disposed || this.checkpoints.has(run.id) || !this.persistFile(run)) return;
    const held = () => index.unsavedCount() + run.summaries.unsavedCount();
    if (held() - (this.heldAfterCheckpoint.get(run.id) ?? 0) < (this.opts.checkpointGroups ?? 16_384)) return;
    const p = this.save(run, true).finally(() => {
      this.checkpoints.delete(run.id);
      if (run.index === index) this.heldAfterCheckpoint.set(run.id, held());
    });
    this.checkpoints.set(run.id, p);
  }

  private onIndexChange(run: RunEntry, ch: RunChange): void {
    run.savedHealth = undefined;
    // A group completed again after a late roll-out has a new version: its summary is stale
    // (prepared groups are checked against the version; summaries are dropped here).
    for (const k of [...ch.removed, ...ch.changed, ...ch.completed]) {
      run.prepared.delete(k);
      run.unprepared.delete(k);
      run.summaries.delete(k);
      run.outcomes.delete(k);
    }
    for (const k of ch.added) {
      run.prepared.delete(k);
      run.summaries.delete(k);
      run.outcomes.delete(k);
    }
    const before = run.latestStep;
    this.arrangeChange(run, ch);
    if (run.error && run.steps.size) run.error = null;
    run.version++;
    // Growth is new groups: a group read at open (streamed while the run loads, or completed later
    // by the idle timeout) is not new data, and would make a finished run look live.
    if (ch.added.length && !run.loading) run.grownAt = ++this.clock;
    const touched = [...new Set([...ch.added, ...ch.completed, ...ch.changed, ...ch.removed])];
    this.emit({ kind: 'run', runId: run.id, changed: touched });
    if (touched.length || before !== run.latestStep) {
      this.markForRescore(run.id);
      this.scheduleSummaries();
    }
    this.checkpointIfDue(run);
  }

  /** Per run: how many times its step index was rebuilt (a sliced rebuild overtaken by another stops). */
  private readonly rebuilds = new WeakMap<RunEntry, number>();

  /** Every complete group of the run has a summary (checked in slices: a huge run's open keeps the event loop). */
  private async everySummary(run: RunEntry): Promise<boolean> {
    const slice = new TimeSlice();
    for (const keys of [...run.steps.values()]) {
      for (let i = 0; i < keys.length; i++) {
        const id = keys.ids[i];
        if (run.summaries.hasLight(id) || !run.index) continue;
        const k = run.index.keyOf(id);
        if (!run.summaries.has(k) && run.index.head(k)?.complete) return false;
      }
      if (slice.due) await slice.next();
    }
    return true;
  }

  /**
   * `rebuild` at open, in slices (a huge restored run is one pass over every group); abandoned
   * when an index change rebuilt the run meanwhile (that rebuild saw the newer groups).
   */
  private async rebuildSliced(run: RunEntry): Promise<void> {
    const index = run.index;
    if (!index) return;
    const at = (this.rebuilds.get(run) ?? 0) + 1;
    this.rebuilds.set(run, at);
    const pass = arrange(index.sizes(), index);
    const slice = new TimeSlice();
    this.slicing.set(run, at);
    try {
      for (let r = pass.next(); ; r = pass.next()) {
        if (r.done) return void this.arranged(run, r.value);
        if (!slice.due) continue;
        await slice.next();
        if (this.rebuilds.get(run) !== at) return;
      }
    } finally {
      if (this.slicing.get(run) === at) this.slicing.delete(run);
    }
  }

  /** Runs whose sliced rebuild is under way (an index change meanwhile rebuilds the run whole). */
  private readonly slicing = new WeakMap<RunEntry, number>();

  /** The step → question index of a run (one pass over the index's heads). */
  private rebuild(run: RunEntry): void {
    const index = run.index;
    if (!index) return;
    this.rebuilds.set(run, (this.rebuilds.get(run) ?? 0) + 1);
    const pass = arrange(index.sizes(), index);
    for (let r = pass.next(); ; r = pass.next()) if (r.done) return void this.arranged(run, r.value);
  }

  /** Per run: the roll-outs of each step, as last counted (`arrangeChange` recounts the steps a change touches). */
  private readonly stepRollouts = new WeakMap<RunEntry, Map<number, number>>();

  private arranged(run: RunEntry, a: Arranged): void {
    run.steps = a.steps;
    run.groups = a.groups;
    run.rollouts = a.rollouts;
    run.latestStep = a.latestStep;
    this.stepRollouts.set(run, a.stepRollouts);
  }

  /**
   * The step → question index after an index change, in the cost of what changed: new groups go to
   * the end of their steps' lists (the index keeps groups in first-record order, and appends a new
   * one), and the steps touched are counted again. The same index as a rebuild's, which runs
   * instead when groups went, the index re-sorted them, a sliced rebuild is under way (it began
   * before these groups), or the count of groups disagrees with the index's (a group announced
   * twice, or one gone unannounced). A followed huge run's change
   * (a step's new groups, a group completed) costs the host those groups, not a pass over the run.
   */
  private arrangeChange(run: RunEntry, ch: RunChange): void {
    const index = run.index;
    const counts = this.stepRollouts.get(run);
    if (!index || !counts || ch.removed.length || ch.rearranged || this.slicing.has(run)) return this.rebuild(run);
    const touched = new Map<number, number[]>();
    const touch = (k: GroupKey): GroupHead | undefined => {
      const h = index.head(k);
      if (h && !touched.has(h.step)) touched.set(h.step, []);
      return h;
    };
    for (const k of ch.added) {
      const h = touch(k);
      if (h) touched.get(h.step)!.push(index.idOf(k));
    }
    for (const k of ch.changed) touch(k);
    for (const k of ch.completed) touch(k);
    for (const k of ch.grown) touch(k);
    let steps = run.steps;
    let groups = run.groups;
    let rollouts = run.rollouts;
    let newStep = false;
    for (const [step, added] of touched) {
      const old = steps.get(step);
      let list = old;
      if (added.length) {
        if (steps === run.steps) steps = new Map(steps); // a change makes new maps and lists (`groupKey` caches by list)
        list = old ? old.concat(added) : new StepKeys(index, Int32Array.from(added));
        if (!old) newStep = true;
        steps.set(step, list);
        groups += added.length;
      }
      if (!list) continue;
      let n = 0;
      for (const k of list) n += index.head(k)?.n ?? 0; // never rolloutsOf: an index change must not build roll-outs
      rollouts += n - (counts.get(step) ?? 0);
      counts.set(step, n);
    }
    if (groups !== index.size) return this.rebuild(run);
    this.rebuilds.set(run, (this.rebuilds.get(run) ?? 0) + 1);
    if (newStep) steps = new Map([...steps].sort((a, b) => a[0] - b[0]));
    run.steps = steps;
    run.groups = groups;
    run.rollouts = rollouts;
    if (newStep) run.latestStep = Math.max(...steps.keys());
  }

  /** A counter that ticks whenever a followed run grows (compare with `RunEntry.grownAt`). */
  get growthClock(): number {
    return this.clock;
  }

  /** The run that grew last since it was first read (a live training run), if any did. */
  lastGrown(): RunEntry | undefined {
    let best: RunEntry | undefined;
    for (const r of this.runs.values()) if (r.grownAt > 0 && (!best || r.grownAt > best.grownAt)) best = r;
    return best;
  }

  remove(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    run.index?.close();
    this.runs.delete(id);
    this.emit({ kind: 'runs' });
  }

  /** Waits until every run has opened and its index has settled. */
  async idle(): Promise<void> {
    while (this.opening.size) await Promise.all([...this.opening.values()]);
    await Promise.all([...this.runs.values()].map((r) => r.index?.settled()));
  }

  /** The question's group with its roll-outs (a cold group is read back from the saved index: not for every row of a list, see `head`). */
  entry(key: QuestionKey): GroupEntry | undefined {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    return k ? run!.index?.group(k) : undefined;
  }

  /** The question's group head: size, completeness, version (nothing read back). */
  head(key: QuestionKey): GroupHead | undefined {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    return k ? run!.index?.head(k) : undefined;
  }

  /** Per step's key list (a rebuild makes new lists): its questions by displayed id, for the last steps looked up. */
  private readonly stepLookups = new Map<StepKeys, Map<string, GroupKey>>();

  /**
   * The group key of a question (step, displayed id): looked up in its step's list, whose map is
   * built when first asked and kept for the last 16 steps asked — never one map over the whole run
   * (a run of millions of roll-outs would keep an entry per group in the host).
   */
  groupKey(run: RunEntry, step: number, questionId: string): GroupKey | undefined {
    const list = run.steps.get(step);
    if (!list || !run.index) return undefined;
    let m = this.stepLookups.get(list);
    if (m) this.stepLookups.delete(list);
    else {
      m = new Map();
      for (const k of list) {
        const h = run.index.head(k);
        if (h) m.set(displayQuestionId(h), k);
      }
    }
    this.stepLookups.set(list, m);
    if (this.stepLookups.size > 16) this.stepLookups.delete(this.stepLookups.keys().next().value as StepKeys);
    return m.get(questionId);
  }

  keyOf(run: RunEntry, k: GroupKey): QuestionKey | undefined {
    const e = run.index?.head(k);
    return e ? { runId: run.id, step: e.step, questionId: displayQuestionId(e) } : undefined;
  }

  /** The prepared group when it is cached (synchronous: the panel's re-scoring path). */
  cached(key: QuestionKey): StoredGroup | undefined {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    if (!run || !k) return undefined;
    const e = run.index?.head(k);
    const c = run.prepared.get(k);
    return c && e && c.version === e.version ? c.group : undefined;
  }

  /** The prepared group: texts read back from disk and features computed once. */
  async get(key: QuestionKey): Promise<StoredGroup | undefined> {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    if (!run || !k) return undefined;
    return (await this.prepare(run, k, true))?.group;
  }

  /**
   * `keep`: into the run's cache of recently used groups. The background scoring does not keep
   * what it prepares: a first open scores every question once, and each prepared group is ~40 KB
   * (features, similarities, previews), so keeping them would fill the cache with groups nobody
   * looked at, and push out the ones the views use.
   */
  private async prepare(run: RunEntry, k: GroupKey, keep: boolean): Promise<{ version: number; group: StoredGroup } | undefined> {
    const h = run.index?.head(k);
    if (!h) return undefined;
    const c = run.prepared.get(k);
    if (c && c.version === h.version) {
      if (!keep) return c;
      run.prepared.delete(k);
      run.prepared.set(k, c);
      return c;
    }
    let group: StoredGroup;
    let e: GroupEntry;
    try {
      e = run.index!.group(k)!; // a cold group's roll-outs read back from the saved index
      if (this.opts.prepare) {
        // Off the host: the worker reads the texts back and prepares; the host keeps the result.
        const done = await this.opts.prepare(e, displayQuestionId(e));
        // A worker's sources come with a copy of the log file's path each (structured clone): the
        // host's own string instead (2,000 prepared groups kept are 128,000 copies, ~9 MB).
        const file = e.firstSource.file;
        for (const src of done.prepared.sources) if (src?.file === file) src.file = file; // equal strings, one kept
        const rollouts = rolloutsOf(e);
        group = storeGroup(
          {
            ...entryToGroup(
              e,
              rollouts.map(() => ''),
              rollouts,
            ),
            questionId: displayQuestionId(e),
          },
          run.id,
          run.label,
          done,
        );
      } else {
        const rollouts = rolloutsOf(e);
        const texts = await Promise.all(rollouts.map((r) => run.index!.readRolloutText(r.source, e.version)));
        group = storeGroup({ ...entryToGroup(e, texts, rollouts), questionId: displayQuestionId(e) }, run.id, run.label);
      }
    } catch (err) {
      if (run.unprepared.get(k) !== h.version) this.opts.log?.(`${run.label}: ${errorMessage(err)}`);
      run.unprepared.set(k, h.version);
      return undefined;
    }
    run.unprepared.delete(k);
    const done = { version: e.version, group };
    if (!keep) return done;
    run.prepared.delete(k);
    run.prepared.set(k, done);
    // Bounded: a long run keeps the most recently used groups' features only (Map order = LRU).
    while (run.prepared.size > PREPARED_CACHE) run.prepared.delete(run.prepared.keys().next().value as GroupKey);
    return done;
  }

  /**
   * What the question's earlier groups (complete, at earlier steps, with outcome checks) feed
   * MS-TTRL's outcome cache, in run order: the cache for the question is what their checks made it
   * (docs/contract.md#ms-ttrl). A view scored alone replays them (scoring.ts `outcomeContext`), so
   * that its MS-TTRL is the run-wide scoring's and the training loop's. From the background
   * scoring's records when it has them, else the group prepared.
   */
  async outcomeHistory(key: QuestionKey): Promise<OutcomeReplay[]> {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    const h = k ? run!.index?.head(k) : undefined;
    if (!run || !h) return [];
    const out: OutcomeReplay[] = [];
    for (const step of [...run.steps.keys()]) {
      if (step >= h.step) break;
      const ek = groupKey(h.run, step, h.questionId);
      const e = run.index?.head(ek);
      if (!e?.complete || !e.outcomeChecks?.length) continue;
      const known = run.outcomes.get(ek)?.replay; // dropped when the group changes
      const replay = known ?? (await this.prepare(run, ek, false).then((p) => p && outcomeReplay(p.group.prepared)));
      if (replay) out.push(replay);
    }
    return out;
  }

  /** A run's health from its records (docs/health.md), off the host thread when the store was given a way. */
  analyseHealth(records: readonly GroupHealth[]): Promise<RunHealth> {
    return this.opts.analyse ? this.opts.analyse(records) : Promise.resolve(analyseRun(labelFreeCopies(records, this.opts.groundTruth?.() ?? 'auto')));
  }

  /**
   * The health records of the run's scored questions, in step order: a light summary's record is
   * read back from the saved index (in slices: the host keeps its event loop). Throws when a record
   * the summary says is saved is not there (never an analysis of part of the run).
   */
  async healthRecords(run: RunEntry): Promise<GroupHealth[]> {
    const out: GroupHealth[] = [];
    const slice = new TimeSlice();
    for (const keys of [...run.steps.values()]) {
      for (const k of keys) {
        const s = run.summaries.get(k);
        if (!s) continue;
        let h = s.health;
        if (!h && s.healthSaved) {
          h = (run.index?.savedExtra(k) as QuestionSummary | undefined)?.health;
          if (!h) throw new Error(`the saved health record of ${k} is missing from the saved index`);
        }
        if (h) out.push(h);
        if (slice.due) await slice.next();
      }
    }
    return out;
  }

  summary(key: QuestionKey): QuestionSummary | undefined {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    return k ? run!.summaries.get(k) : undefined;
  }

  firstQuestion(): QuestionKey | undefined {
    for (const run of this.runs.values()) {
      for (const keys of run.steps.values()) if (keys.length) return this.keyOf(run, keys.at(0)!);
    }
    return undefined;
  }

  /** Recomputes every summary (after a settings change). */
  invalidateSummaries(): void {
    for (const run of this.runs.values()) {
      run.summaries.clear();
      run.outcomes.clear();
      run.savedHealth = undefined;
      this.markForRescore(run.id);
    }
    this.scheduleSummaries();
  }

  /** Resolves when the background scoring pass has nothing left to do. */
  async summariesDone(): Promise<void> {
    await this.idle();
    while (this.summaryRunning || this.summaryAgain) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * Scores every question without a summary, in step order, in slices of a few milliseconds so
   * the extension host never blocks. MS-TTRL's outcome cache runs over the steps in order: every
   * group's checks go into it as the pass walks the run, and a scored group whose question's cache
   * before it changed is scored again (`RunEntry.outcomes`).
   */
  private scheduleSummaries(): void {
    if (this.summaryRunning) {
      this.summaryAgain = true;
      return;
    }
    this.summaryRunning = true;
    const generation = ++this.summaryGeneration;
    const work = async (): Promise<void> => {
      for (const run of [...this.runs.values()]) {
        if (!run.index) continue;
        const ctx: RunContext = createRunContext();
        const mark = this.rescoreAll.get(run.id) ?? 0;
        // scoring is the host's own work, paced a little looser than a restore's slices
        const slice = new TimeSlice(12);
        let lastEmit = Date.now();
        let changed = false;
        // Groups are scored one by one in step order (MS-TTRL's cache), but prepared ahead: a few
        // requests in flight keep every what-if worker busy while the host scores.
        const order = stepOrder(run);
        // MS-TTRL's outcome cache, per question, for the parameters being scored with
        const msParams = resolveParams(engineParams(this.opts.params()));
        const needs = (k: GroupKey): boolean => {
          const e = run.index?.head(k);
          if (!e?.complete || run.unprepared.get(k) === e.version) return false;
          return !run.summaries.has(k) || (mark > 0 && !run.outcomes.has(k) && !!e.outcomeChecks?.length);
        };
        const ahead = new Map<GroupKey, Promise<{ version: number; group: StoredGroup } | undefined>>();
        let next = 0;
        const prefetch = (from: number) => {
          next = Math.max(next, from);
          // A bounded look ahead per call: scored questions are skipped, and one scan to the end of
          // a huge run (one question to score early on, the rest scored) would stall the host.
          const stop = Math.min(order.length, next + 2048);
          while (ahead.size < PREPARE_AHEAD && next < stop) {
            const k = order.at(next++);
            if (needs(k) && !ahead.has(k)) ahead.set(k, this.prepare(run, k, false));
          }
        };
        /** Leaves a scored group as it is (its outcome checks still go into the cache, in order). */
        const pass = async (k: GroupKey, i: number, cheap: boolean): Promise<void> => {
          const m = run.outcomes.get(k);
          if (m?.replay) ctx.replayOutcomes(msParams, m.replay);
          ahead.delete(k);
          if (!cheap || (i & 255) === 255) if (slice.due) await slice.next();
        };
        for (let i = 0; i < order.length; i++) {
          {
            const k = order.at(i);
            if (this.disposed || generation !== this.summaryGeneration || this.runs.get(run.id) !== run) return;
            let head: GroupHead | undefined;
            if (run.summaries.has(k)) {
              // Scored. Again only when what its MS-TTRL read may have changed: the question's
              // outcome cache before it is not the one it was scored with (an earlier group of the
              // question changed), or, scored before this process kept track (restored) and the
              // run changed, it has outcome checks or its question has a cache.
              const m = run.outcomes.get(k);
              if (m) {
                if (seenBy(ctx, msParams, m.questionId) === m.seen) {
                  await pass(k, i, true);
                  continue;
                }
              } else if (mark === 0) {
                // a run restored with its summaries is walked without building a head: still in slices
                await pass(k, i, true);
                continue;
              } else {
                head = run.index.head(k);
                if (!head || !(head.outcomeChecks?.length || seenBy(ctx, msParams, displayQuestionId(head)) !== '[]')) {
                  await pass(k, i, false);
                  continue;
                }
              }
            }
            const e = head ?? run.index.head(k);
            if (!e?.complete || run.unprepared.get(k) === e.version) {
              await pass(k, i, false);
              continue;
            }
            prefetch(i + 1);
            const p = await (ahead.get(k) ?? this.prepare(run, k, false));
            ahead.delete(k);
            prefetch(i + 1);
            // prepared for the group as it is now (a change meanwhile gives it a new version: it is
            // scored again on the next pass, from its new roll-outs)
            if (!p || p.version !== run.index.head(k)?.version) continue;
            const g = p.group;
            const seen = seenBy(ctx, msParams, g.prepared.questionId);
            try {
              run.summaries.set(k, summarize(g, score(g, this.opts.params(), this.opts.configuredOperator(), ctx, summaryOperators(this.opts.configuredOperator())), ctx));
              changed = true;
            } catch (err) {
              this.opts.log?.(`scoring ${g.key.questionId} (step ${g.key.step}) failed: ${errorMessage(err)}`);
            }
            // Its checks go into the cache whether or not MS-TTRL ran on it (the training loop's
            // cache has every group's); a group that MS-TTRL scored already leaves it as it is.
            const replay = g.prepared.outcomeChecks.length ? outcomeReplay(g.prepared) : undefined;
            if (replay) ctx.replayOutcomes(msParams, replay);
            if (replay || seen !== '[]') run.outcomes.set(k, { questionId: g.prepared.questionId, seen, replay });
            else run.outcomes.delete(k);
            if (slice.due) {
              this.checkpointIfDue(run);
              await slice.next();
              if (changed && Date.now() - lastEmit > 400) {
                run.version++;
                this.emit({ kind: 'summaries', runId: run.id });
                lastEmit = Date.now();
                changed = false;
              }
            }
          }
        }
        if ((this.rescoreAll.get(run.id) ?? 0) === mark) this.rescoreAll.delete(run.id);
        if (changed) {
          run.version++;
          this.emit({ kind: 'summaries', runId: run.id });
        }
        if (run.savedVersion !== run.version) this.scheduleSave(run);
      }
    };
    setImmediate(() => {
      void work()
        .catch((err) => this.opts.log?.(`background scoring failed: ${errorMessage(err)}`))
        .finally(() => {
          this.summaryRunning = false;
          if (this.summaryAgain && !this.disposed) {
            this.summaryAgain = false;
            this.scheduleSummaries();
          }
        });
    });
  }

  private readonly saveTimers = new Map<string, NodeJS.Timeout>();
  private readonly saving = new Set<Promise<number>>();

  /** Saves the run's index and summaries once it has been quiet for `saveDelayMs`. */
  private scheduleSave(run: RunEntry): void {
    if (!run.index || !this.persistFile(run) || this.disposed) return;
    clearTimeout(this.saveTimers.get(run.id));
    const t = setTimeout(() => {
      this.saveTimers.delete(run.id);
      const p = this.save(run);
      this.saving.add(p);
      void p.finally(() => this.saving.delete(p));
    }, this.opts.saveDelayMs ?? 5000);
    t.unref?.();
    this.saveTimers.set(run.id, t);
  }

  /**
   * Saves a run's index now, with the summaries of its scored questions. Resolves to the bytes
   * written. `checkpoint`: a save to bound what is held in memory (`checkpointGroups`), part way
   * through a first open or its scoring: without the run's health (analysed at the save once the
   * run is quiet), and the run not counted as saved.
   */
  async save(run: RunEntry, checkpoint = false): Promise<number> {
    const index = run.index;
    if (!index || this.disposed || this.runs.get(run.id) !== run) return 0;
    const version = run.version;
    const tag = this.summaryTag();
    // the run's health goes with the index, so that a second open does not read every record back
    let health: RunEntry['savedHealth'];
    if (!checkpoint) {
      try {
        health = run.savedHealth ?? { size: run.summaries.size, health: await this.analyseHealth(await this.healthRecords(run)) };
      } catch (err) {
        this.opts.log?.(`${run.label}: ${errorMessage(err)}`);
      }
      if (run.version !== version || this.disposed) return 0;
    }
    // the summaries written whole (with their health record): those may go light afterwards
    const written = new Map<GroupKey, QuestionSummary>();
    const bytes = await index.save(
      {
        tag,
        // A light summary (restored, or saved before, its group unchanged) is the one saved with its
        // group, and so is none: a summary is dropped with its group, or all at once for new
        // settings (another tag: the writer keeps nothing saved under the old one; the same tag:
        // scored again to the same). The writer copies a record of such groups as it is.
        of: (e) => {
          const s = run.summaries.get(e.key);
          if (!s?.health) return SAVED_EXTRA;
          written.set(e.key, s);
          return s;
        },
        // (a light one is in columns: only a summary held whole may not be the one saved)
        unchanged: (k) => !run.summaries.heldWhole(k),
        savedLight: (e) => run.summaries.get(e.key),
        light: (x) => lightSummary(x as QuestionSummary),
        lightPack: (xs) => packSummaries(xs as (QuestionSummary | undefined)[]),
        run: health,
      },
      { checkpoint },
    );
    if (bytes > 0 && !checkpoint && run.version === version) {
      run.savedVersion = version;
      if (health) run.savedHealth = health;
    }
    // The groups saved went to disk (RunIndex: heads); the summaries written with them go light,
    // their records on disk. Only those: a summary scored while the save ran (the scoring pass
    // bumps the run's version in batches) is not in the file, and a light one would be lost.
    if (bytes > 0 && tag === this.summaryTag()) {
      const slice = new TimeSlice(); // a summary per question: a huge run's would stall the host
      for (const [k, s] of written) {
        if (this.disposed || run.index !== index) break;
        if (run.summaries.get(k) === s && index.head(k)?.cold) run.summaries.set(k, lightSummary(s));
        if (slice.due) await slice.next();
      }
    }
    return bytes;
  }

  /**
   * Resolves when no save is waiting (tests): every run saved at its current version. A save that
   * found its run changed under it (an idle completion while the health was analysed) wrote nothing,
   * so this goes round again, a bounded number of times.
   */
  async savesDone(): Promise<void> {
    for (let round = 0; round < 20; round++) {
      await this.summariesDone();
      for (const id of [...this.saveTimers.keys()]) {
        clearTimeout(this.saveTimers.get(id));
        this.saveTimers.delete(id);
        const run = this.runs.get(id);
        if (run) await this.save(run);
      }
      await Promise.all([...this.saving]);
      const unsaved = [...this.runs.values()].filter((r) => r.index && this.persistFile(r) && r.savedVersion !== r.version);
      if (this.disposed || !unsaved.length) return;
      for (const r of unsaved) if (!this.saveTimers.has(r.id)) await this.save(r);
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const t of this.saveTimers.values()) clearTimeout(t);
    this.saveTimers.clear();
    for (const run of this.runs.values()) run.index?.close();
    this.listeners.clear();
  }
}

type Arranged = Pick<RunEntry, 'steps' | 'groups' | 'rollouts' | 'latestStep'> & { stepRollouts: Map<number, number> };

/** A run's steps (ascending, each with its question keys in first-record order), question keys and size, from its groups' sizes; yields every 256 groups. */
function* arrange(sizes: Iterable<GroupSize>, index: KeyOf): Generator<void, Arranged> {
  const ids = new Map<number, number[]>();
  const stepRollouts = new Map<number, number>();
  let rollouts = 0;
  let groups = 0;
  for (const e of sizes) {
    let list = ids.get(e.step);
    if (!list) ids.set(e.step, (list = []));
    list.push(e.id);
    rollouts += e.n; // never rolloutsOf: an index change must not build every roll-out
    stepRollouts.set(e.step, (stepRollouts.get(e.step) ?? 0) + e.n);
    if ((++groups & 255) === 0) yield;
  }
  const sorted = new Map([...ids.entries()].sort((a, b) => a[0] - b[0]).map(([step, list]) => [step, new StepKeys(index, Int32Array.from(list))] as const));
  return { steps: sorted, groups, rollouts, latestStep: sorted.size ? Math.max(...sorted.keys()) : null, stepRollouts };
}

/** Every question key of a run in step order, read by position (ids end to end: no string per group held). */
function stepOrder(run: RunEntry): { length: number; at(i: number): GroupKey } {
  const lists = [...run.steps.values()];
  const ids = new Int32Array(lists.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const l of lists) {
    ids.set(l.ids, at);
    at += l.length;
  }
  const index = run.index;
  return { length: ids.length, at: (i) => index!.keyOf(ids[i]) };
}

/**
 * A question's outcome cache as the store keeps it for a scored group (`RunEntry.outcomes.seen`):
 * short ones as they are ('[]': nothing cached), longer ones as their SHA-1 (a memo per group of a
 * huge MS-TTRL run: a few bytes, not the cache's JSON).
 */
function seenBy(ctx: RunContext, p: Params, questionId: string): string {
  const s = ctx.outcomeFingerprint(p, questionId);
  return s.length <= 48 ? s : createHash('sha1').update(s).digest('base64');
}

function summaryOperators(configured: OperatorId | undefined): OperatorId[] {
  return [...new Set<OperatorId>(['majority', 'core', ...(configured ? [configured] : [])])];
}
