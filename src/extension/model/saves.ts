// Saving a followed run: its index (src/logs/follow/persist.ts) with its questions' summaries and
// the run's health, once the run is scored and quiet (`scheduleSave`), or at once as a checkpoint
// when too much of a first open is held unsaved (`checkpointIfDue`). What a save keeps — which
// summaries go whole, which light, the health — is decided here. The owner (run-store.ts) calls it
// and tells it what it needs through `SaveHooks`.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { errorMessage } from '../../util/errors';
import { TimeSlice } from '../../util/slice';
import { analyseRun, labelFreeCopies, type GroupHealth, type RunHealth } from '../../engine';
import { SAVED_EXTRA, type GroupKey } from '../../logs/log-layer';
import { cacheKey } from '../../logs/cache/cached-run';
import type { RunEntry, StoreOptions } from './run-entry';
import { runOrder } from './run-order';
import { lightSummary, type QuestionSummary } from './scoring';
import { packSummaries } from './summaries';

/** What saving needs of its owner. */
export interface SaveHooks {
  runs(): Iterable<RunEntry>;
  run(id: string): RunEntry | undefined;
  /** The run is still followed (not removed, re-opened or disposed). */
  live(run: RunEntry): boolean;
  disposed(): boolean;
  /** Resolves when the background scoring has nothing left to do. */
  summariesDone(): Promise<void>;
}

export class RunSaves {
  constructor(
    private readonly opts: Pick<StoreOptions, 'persistDir' | 'groundTruth' | 'saveDelayMs' | 'checkpointGroups' | 'configuredOperator' | 'params' | 'log' | 'analyse'>,
    private readonly hooks: SaveHooks,
  ) {}

  /** The persisted index of a run, when persisting (one file per run and ground-truth setting). */
  persistFile(run: RunEntry): { file: string; key: string } | undefined {
    const dir = this.opts.persistDir?.();
    if (!dir) return undefined;
    const key = cacheKey(run.path, { groundTruth: this.opts.groundTruth?.() ?? 'auto', index: 'followed' });
    return { file: join(dir, `${key}.cli`), key };
  }

  /** What the summaries were scored with: saved with them, they are restored only for the same. */
  summaryTag(): string {
    return createHash('sha1')
      .update(JSON.stringify([this.opts.configuredOperator() ?? null, Object.entries(this.opts.params()).sort()]))
      .digest('hex');
  }

  /** A checkpoint per run in progress (`checkpointGroups`). */
  private readonly checkpoints = new Map<string, Promise<number>>();
  /** Per run: what was held unsaved after its last checkpoint (what a save cannot let go of: groups not complete). */
  private readonly heldAfterCheckpoint = new Map<string, number>();

  /** Saves the run's index at once when `checkpointGroups` more of it are held in memory unsaved than after the last checkpoint. */
  checkpointIfDue(run: RunEntry): void {
    const index = run.index;
    if (!index || this.hooks.disposed() || this.checkpoints.has(run.id) || !this.persistFile(run)) return;
    const held = () => index.unsavedCount() + run.summaries.unsavedCount();
    if (held() - (this.heldAfterCheckpoint.get(run.id) ?? 0) < (this.opts.checkpointGroups ?? 16_384)) return;
    const p = this.save(run, true).finally(() => {
      this.checkpoints.delete(run.id);
      if (run.index === index) this.heldAfterCheckpoint.set(run.id, held());
    });
    this.checkpoints.set(run.id, p);
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
    const order = runOrder(run);
    for (let i = 0; i < order.length; i++) {
      const k = order.at(i);
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
    return out;
  }

  private readonly saveTimers = new Map<string, NodeJS.Timeout>();
  private readonly saving = new Set<Promise<number>>();

  /** Saves the run's index and summaries once it has been quiet for `saveDelayMs`. */
  scheduleSave(run: RunEntry): void {
    if (!run.index || !this.persistFile(run) || this.hooks.disposed()) return;
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
    if (!index || !this.hooks.live(run)) return 0;
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
      if (run.version !== version || this.hooks.disposed()) return 0;
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
        if (this.hooks.disposed() || run.index !== index) break;
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
      await this.hooks.summariesDone();
      for (const id of [...this.saveTimers.keys()]) {
        clearTimeout(this.saveTimers.get(id));
        this.saveTimers.delete(id);
        const run = this.hooks.run(id);
        if (run) await this.save(run);
      }
      await Promise.all([...this.saving]);
      const unsaved = [...this.hooks.runs()].filter((r) => r.index && this.persistFile(r) && r.savedVersion !== r.version);
      if (this.hooks.disposed() || !unsaved.length) return;
      for (const r of unsaved) if (!this.saveTimers.has(r.id)) await this.save(r);
    }
  }

  /** A run re-opened: what it held after its last checkpoint is no longer its. */
  forget(run: RunEntry): void {
    this.heldAfterCheckpoint.delete(run.id);
  }

  dispose(): void {
    for (const t of this.saveTimers.values()) clearTimeout(t);
    this.saveTimers.clear();
  }
}
