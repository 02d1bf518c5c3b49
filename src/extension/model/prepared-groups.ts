// A run's prepared groups: features computed once per group version (on a worker thread when the
// store was given one, else here), texts never kept, the most recently used kept for the views.
// The owner (run-store.ts) asks `prepare` for a view (`keep`) and hands `prepare` to the
// background scoring (not kept).
import { errorMessage } from '../../util/errors';
import { rolloutsOf, type GroupEntry, type GroupKey } from '../../logs/log-layer';
import { prepareEntry } from '../workers/runtime';
import { displayQuestionId, type RunEntry, type StoreOptions } from './run-entry';
import { runItem } from './run-order';
import { storedGroup, type StoredGroup } from './scoring';

/** How many prepared groups (features, similarities, previews; no texts: ~40 KB each) a run keeps, the most recently used. */
export const PREPARED_CACHE = 500;

export class PreparedGroups {
  constructor(private readonly opts: Pick<StoreOptions, 'prepare' | 'log'>) {}

  /** The group's prepared features when they are cached for its version (synchronous: the panel's re-scoring path). */
  cached(run: RunEntry, k: GroupKey): StoredGroup | undefined {
    const e = run.index?.head(k);
    const c = run.prepared.get(k);
    return c && e && c.version === e.version ? c.group : undefined;
  }

  /**
   * `keep`: into the run's cache of recently used groups. The background scoring does not keep
   * what it prepares: a first open scores every question once, and each prepared group is ~40 KB
   * (features, similarities, previews), so keeping them would fill the cache with groups nobody
   * looked at, and push out the ones the views use.
   */
  async prepare(run: RunEntry, k: GroupKey, keep: boolean): Promise<{ version: number; group: StoredGroup } | undefined> {
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
      const questionId = displayQuestionId(e);
      let done: { prepared: StoredGroup['prepared']; previews: string[] };
      if (this.opts.prepare) {
        // Off the host: the worker reads the texts back and prepares; the host keeps the result.
        const item = { ...runItem(run, k)!, version: e.version, entry: () => e };
        done = await this.opts.prepare(run.id, item, { keep });
        // A worker's sources come with a copy of the log file's path each (structured clone): the
        // host's own string instead (2,000 prepared groups kept are 128,000 copies, ~9 MB).
        const file = e.firstSource.file;
        for (const src of done.prepared.sources) if (src?.file === file) src.file = file; // equal strings, one kept
      } else done = await prepareEntry(e, questionId, keep);
      // the entry's head, never a group built with empty texts: the texts stayed where they were read
      group = storedGroup({ step: e.step, questionId, prompt: e.prompt, groundTruthForms: e.groundTruthForms, sampleIdx: rolloutsOf(e).map((r) => r.sampleIdx) }, run.id, run.label, done);
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
}
