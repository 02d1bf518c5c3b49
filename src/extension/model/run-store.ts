// The host's store of followed runs, on the log layer's RunIndex (src/logs): the index keeps each
// group's numbers and record offsets (never texts), follows the files live, and says which groups
// were added, completed, changed or removed. This file is the owner: it adds, opens, re-opens and
// removes runs, says what changed (events), answers the views' lookups, and wires the parts, each
// a file of its own that gets what it needs of the owner through narrow callbacks:
//   step-arrangement.ts  the step → question index the explorer walks lazily (no scoring on expansion);
//   prepared-groups.ts   prepared groups (features computed once, on a worker thread), the views' cached;
//   background-scoring.ts per-question summaries scored in the background, in slices, in run order
//                         (run-order.ts: MS-TTRL's outcome cache follows the steps);
//   saves.ts             saving each run's index and summaries once it is scored and quiet, and
//                         checkpoints; a reopened run is restored from them (src/logs/follow/persist.ts).
// Pure Node: no 'vscode', so unit tests drive it directly. It never calls the worker threads: the
// composition root hands it `prepare` and `analyse` (ARCHITECTURE.md: layers).
import { resolve } from 'node:path';
import { errorMessage } from '../../util/errors';
import type { GroupHealth, OutcomeReplay, RunHealth } from '../../engine';
import { RunIndex, runLabel, type GroupEntry, type GroupHead, type GroupKey, type RunChange } from '../../logs/log-layer';
import type { QuestionKey } from '../../protocol/messages';
import { safeText } from '../../logs/safe-text';
import { TimeSlice } from '../../util/slice';
import { BackgroundScoring } from './background-scoring';
import { PreparedGroups } from './prepared-groups';
import { displayQuestionId, type RunEntry, type StoreEvent, type StoreOptions } from './run-entry';
import { RunSaves } from './saves';
import type { QuestionSummary, StoredGroup } from './scoring';
import type { StepKeys } from './step-keys';
import { StepArrangement } from './step-arrangement';
import { QuestionSummaries } from './summaries';

export { displayQuestionId, questionKeyString, type RunEntry, type StoreEvent, type StoreOptions } from './run-entry';
export { PREPARED_CACHE } from './prepared-groups';

export class RunStore {
  readonly runs = new Map<string, RunEntry>();
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly opening = new Map<string, Promise<void>>();
  private disposed = false;
  private clock = 0;
  private readonly arrangement = new StepArrangement((run) => this.rebuild(run));
  private readonly preparedGroups: PreparedGroups;
  private readonly scoring: BackgroundScoring;
  private readonly saves: RunSaves;

  constructor(private readonly opts: StoreOptions) {
    const live = (run: RunEntry): boolean => !this.disposed && this.runs.get(run.id) === run;
    const disposed = (): boolean => this.disposed;
    this.preparedGroups = new PreparedGroups(opts);
    this.saves = new RunSaves(opts, { runs: () => this.runs.values(), run: (id) => this.runs.get(id), live, disposed, summariesDone: () => this.summariesDone() });
    this.scoring = new BackgroundScoring({
      runs: () => this.runs.values(),
      live,
      disposed,
      // through the owner's `prepare` (one way to a group's features)
      prepare: (run, k, keep) => this.prepare(run, k, keep),
      params: opts.params,
      configuredOperator: opts.configuredOperator,
      log: opts.log,
      idle: () => this.idle(),
      summariesChanged: (run) => {
        run.version++;
        this.emit({ kind: 'summaries', runId: run.id });
      },
      checkpointIfDue: (run) => this.saves.checkpointIfDue(run),
      scheduleSave: (run) => this.saves.scheduleSave(run),
    });
  }

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
    this.saves.forget(run);
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
      const found = this.saves.persistFile(run);
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
      await this.arrangement.rebuildSliced(run);
      // the summaries saved with the index, for its groups restored unchanged (same settings)
      // (light: each health record stays on disk with its group, read back by `healthRecords`)
      const slice = new TimeSlice();
      run.summaries.reserve(index.size);
      for (const [id, v] of index.restoredExtras(this.saves.summaryTag())) {
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
      const h = run.index!.restoredRunExtra(this.saves.summaryTag()) as RunEntry['savedHealth'];
      if (h && h.size === run.summaries.size) run.savedHealth = h;
    }
    this.emit({ kind: 'run', runId: run.id, changed: [] });
    if (!asSaved) this.scoring.markForRescore(run.id);
    this.scheduleSummaries();
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
    this.arrangement.change(run, ch);
    if (run.error && run.steps.size) run.error = null;
    run.version++;
    // Growth is new groups: a group read at open (streamed while the run loads, or completed later
    // by the idle timeout) is not new data, and would make a finished run look live.
    if (ch.added.length && !run.loading) run.grownAt = ++this.clock;
    const touched = [...new Set([...ch.added, ...ch.completed, ...ch.changed, ...ch.removed])];
    this.emit({ kind: 'run', runId: run.id, changed: touched });
    if (touched.length || before !== run.latestStep) {
      this.scoring.markForRescore(run.id);
      this.scheduleSummaries();
    }
    this.saves.checkpointIfDue(run);
  }

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
    return k ? this.preparedGroups.cached(run!, k) : undefined;
  }

  /** The prepared group: texts read back from disk and features computed once (kept for the views). */
  async get(key: QuestionKey): Promise<StoredGroup | undefined> {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    if (!run || !k) return undefined;
    return (await this.prepare(run, k, true))?.group;
  }

  /** Every group's features go through here (the views' and the background scoring's: prepared-groups.ts). */
  private prepare(run: RunEntry, k: GroupKey, keep: boolean): Promise<{ version: number; group: StoredGroup } | undefined> {
    return this.preparedGroups.prepare(run, k, keep);
  }

  /**
   * What the question's earlier groups (complete, at earlier steps, with outcome checks) feed
   * MS-TTRL's outcome cache, in run order (background-scoring.ts `history`). A view scored alone
   * replays them (scoring.ts `outcomeContext`), so that its MS-TTRL is the run-wide scoring's and
   * the training loop's.
   */
  async outcomeHistory(key: QuestionKey): Promise<OutcomeReplay[]> {
    const run = this.runs.get(key.runId);
    const k = run && this.groupKey(run, key.step, key.questionId);
    const h = k ? run!.index?.head(k) : undefined;
    return run && h ? this.scoring.history(run, h) : [];
  }

  /** A run's health from its records (docs/health.md), off the host thread when the store was given a way. */
  analyseHealth(records: readonly GroupHealth[]): Promise<RunHealth> {
    return this.saves.analyseHealth(records);
  }

  /** The health records of the run's scored questions, in run order (saves.ts). */
  healthRecords(run: RunEntry): Promise<GroupHealth[]> {
    return this.saves.healthRecords(run);
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
      this.scoring.markForRescore(run.id);
    }
    this.scheduleSummaries();
  }

  /** Resolves when the background scoring pass has nothing left to do. */
  summariesDone(): Promise<void> {
    return this.scoring.done();
  }

  private scheduleSummaries(): void {
    this.scoring.schedule();
  }

  /** The step → question index of a run, rebuilt whole (step-arrangement.ts). */
  private rebuild(run: RunEntry): void {
    this.arrangement.rebuild(run);
  }

  /** Saves a run's index now, with its scored questions' summaries (saves.ts); resolves to the bytes written. */
  save(run: RunEntry, checkpoint = false): Promise<number> {
    return this.saves.save(run, checkpoint);
  }

  /** Resolves when no save is waiting (tests): every run saved at its current version. */
  savesDone(): Promise<void> {
    return this.saves.savesDone();
  }

  dispose(): void {
    this.disposed = true;
    this.saves.dispose();
    for (const run of this.runs.values()) run.index?.close();
    this.listeners.clear();
  }
}
