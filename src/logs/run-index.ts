// RunIndex: a run's groups as the engine needs them, followable while the training loop writes.
//
// What it keeps. Per group (entries.ts): run, step, question_id, prompt, ground truth (diagnostics
// only), outcome checks, a version, and per roll-out the numbers the engine needs (mean log-prob,
// logged reward, pre-extracted answer, verification, sample_idx, format extras) plus the record's
// byte range (file, line, offset, length, and `item` for a roll-out inside a group record). Never
// the roll-out text: `loadGroup` / `readRolloutText` read it back from disk by offset.
//
// The parts, each in its own module:
//   follow/watch.ts  file watching: fs.watch or polling (network file systems), debounced;
//   follow/files.ts  per-file state, and how a file changed (grown, replaced, truncated, rewritten);
//   follow/read.ts   incremental reading from the last consumed record (tail rules, long lines);
//   assemble.ts      group assembly: identity, versions, completion ('followed' policy: size,
//                    step moved on, idleness; 'one-shot' for a static index), duplicates;
//   entries.ts       packing: a group record's roll-outs in columns, `rolloutsOf`.
//   follow/persist.ts  the saved index: restored at open (files unchanged or appended to are not
//                    read again), written by `save`.
// RunIndex runs them in three layers, each a class extending the one before:
//   run-index-update.ts  the per-file state, one update at a time, the change events, the scan;
//   run-index-saved.ts   restore at open, cold groups read back, `save` (inside the update chain);
//   run-index.ts         (this file) opening a run and the public queries.
// Its shapes: run-index-types.ts.
//
// Modes. `static` (follow: false): one read, groups completed as in readRun. `watch` / `poll`: see
// follow/watch.ts; `mode` says which. A file that shrinks, is replaced or is rewritten is re-read
// from scratch: its groups are dropped and read again, with new versions. A deleted file drops its
// groups with a notice. New files are picked up. A file that ends mid-line is still being written
// (verl's V1 writer appends line by line from a thread; on NFS/Lustre a pause of seconds mid-line
// is normal): none of its groups completes by idleness. A group smaller than its stream's usual
// size in a file modified lately waits ten idle periods (a writer pausing between lines).
//
// Events: `onDidChange({ removed, added, completed, changed, grown, rearranged })`, handled in that
// order; a key can be both removed and added in one event (its file was re-read), and then it is a
// new group. `grown`: open groups whose size changed; `rearranged`: the groups were put in a new
// order, not only appended to (a listener that keeps its own order arranges again). The initial
// read streams its changes to the listeners subscribed in `onStart`.
import type { Stats } from 'node:fs';
import { errnoCode, errorMessage } from '../util/errors';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Group } from '../engine';
import { readRolloutText as readText } from './texts.js';
import { confidentCount, entryToGroup, rolloutsOf, type GroupEntry, type GroupHead } from './entries.js';
export { SAVED_EXTRA } from './follow/persist.js';
import type { GroupKey, LogFormat, RolloutSource } from './log-types.js';
import type { GroupSize } from './group-table.js';
import type { KeyIndex } from './key-index.js';
import { NO_CONFIDENCE, type ConfidenceSummary, type RunChange } from './run-index-types.js';
import { RunIndexSaved } from './run-index-saved.js';

export type { GroupEntry } from './entries.js';
export { entryToGroup, orderRollouts, rolloutsOf, type GroupHead } from './entries.js';
import type { RunIndexOptionsOf } from './run-index-types.js';
export type { RunChange, PersistOptions, SaveExtras, PersistedOpen, RunProgress, ConfidenceSummary } from './run-index-types.js';

export type RunIndexOptions = RunIndexOptionsOf<RunIndex>;

export class RunIndex extends RunIndexSaved {
  private constructor(root: string, isDir: boolean, opts: RunIndexOptions) {
    super(root, isDir, opts);
  }

  /** Opens a run (folder or file). Throws when PATH cannot be read; everything else is a notice. */
  static async open(path: string, opts: RunIndexOptions): Promise<RunIndex> {
    const root = resolve(path);
    let st: Stats;
    try {
      st = await stat(root);
    } catch (err) {
      const code = errnoCode(err);
      throw new Error(code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot read (${code ?? errorMessage(err)})`);
    }
    const idx = new RunIndex(root, st.isDirectory(), opts);
    opts.onStart?.(idx);
    try {
      await idx.start();
    } catch (err) {
      idx.close();
      throw err;
    }
    return idx;
  }

  /** Waits until every update queued so far (initial read, events) has been applied. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Forces a full rescan now (e.g. a "refresh" command); resolves when applied. */
  refresh(): Promise<void> {
    return this.enqueue((ch) => this.scan(ch, false));
  }

  /**
   * All groups' heads, in the order their first record was read: everything but the roll-outs,
   * prompt and logged operator (a group restored from a persisted index keeps those on disk until
   * it is needed: `group`). Cheap: nothing is read or built.
   */
  groups(): GroupHead[] {
    return [...this.asm.entries.values()];
  }

  /**
   * Each group's key, step and size, in the order of `groups`, without building a head (what
   * arranging a huge run's steps needs): one object, reused as the walk goes (read it at once).
   */
  sizes(): Iterable<GroupSize> {
    return this.asm.entries.sizes();
  }

  /** A group's id while it is held (-1: not held): a number standing for its key (`keyOf`), for lists that hold many. */
  idOf(key: GroupKey): number {
    return this.asm.entries.idOf(key);
  }

  /** The index's key ids (group-table.ts), for a holder of many (the store's summaries): read only. */
  get keyIds(): KeyIndex {
    return this.asm.entries.keyIds;
  }

  /** The key of an id given by `idOf` or `sizes`. */
  keyOf(id: number): GroupKey {
    return this.asm.entries.keyOf(id);
  }

  /** How many groups are complete (no array of every group built: the explorer asks on each render). */
  completeCount(): number {
    return this.asm.entries.completeCount();
  }

  /** A group's head (see `groups`). */
  head(key: GroupKey): GroupHead | undefined {
    return this.asm.entries.get(key);
  }

  /**
   * A group with its roll-outs: a cold group is read back from the persisted index (a recently
   * read record is kept; the group stays cold in the index, so the host holds only what is in use).
   */
  group(key: GroupKey): GroupEntry | undefined {
    const e = this.asm.entries.get(key);
    if (!e?.cold) return e;
    return this.thaw(e);
  }

  get size(): number {
    return this.asm.size;
  }

  /** Groups held in memory with their roll-outs, not saved (a save makes the complete ones cold heads). */
  unsavedCount(): number {
    return this.opts.persist ? this.asm.entries.warm : 0;
  }

  /**
   * Which roll-outs carry a confidence c_i (a mean token log-prob, needed by CISC and CoRE) and,
   * when none do, why: what the run's formats log. The explorer shows it per run.
   */
  confidence(): ConfidenceSummary {
    let rollouts = 0;
    let withConfidence = 0;
    const formats = new Set<LogFormat>();
    this.asm.entries.forEachCount((format, n, confident, e) => {
      formats.add(format);
      rollouts += n;
      withConfidence += confident ?? confidentCount(e!);
    });
    const list = [...formats];
    let why: string | null = null;
    if (rollouts > 0 && withConfidence === 0) why = list.map((f) => NO_CONFIDENCE[f]).join('; ');
    else if (withConfidence < rollouts) why = `${rollouts - withConfidence} roll-outs have no log-probs logged`;
    return { rollouts, withConfidence, formats: list, why };
  }

  onDidChange(listener: (e: RunChange) => void): { dispose(): void } {
    this.listeners.push(listener);
    return {
      dispose: () => {
        const i = this.listeners.indexOf(listener);
        if (i >= 0) this.listeners.splice(i, 1);
      },
    };
  }

  /** The engine's Group for `key`, with texts read back from disk. Throws when the records changed. */
  async loadGroup(key: GroupKey): Promise<Group> {
    const e = this.group(key);
    if (!e) throw new Error(`no group ${key} in ${this.root}`);
    const rollouts = rolloutsOf(e);
    const texts: string[] = [];
    for (const r of rollouts) texts.push(await readText(r.source, e.version)); // in order: a group record's line is parsed once
    return entryToGroup(e, texts, rollouts);
  }

  /** One roll-out's text; `version`: its group's version (lets the roll-outs of one line share a read). */
  readRolloutText(source: RolloutSource, version?: number): Promise<string> {
    return readText(source, version);
  }

  close(): void {
    this.closed = true;
    // after the updates queued: a save in progress still reads its cold groups
    void this.chain.then(() => this.cold?.close());
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.watcher?.close();
  }
}
