// RunIndex's save and restore (run-index.ts has the overview; the file format: follow/persist.ts):
// the saved index taken at open (files unchanged or appended to are not read again), cold groups
// read back from it on demand (each record checked as it is read), the per-group and run-level
// data saved beside the groups, and `save`, which runs between two updates of the chain (or at a
// record boundary of the initial read) and then lets the groups it wrote go cold.
import { errnoCode, errorMessage } from '../util/errors';
import { stat } from 'node:fs/promises';
import { Change } from './assemble.js';
import type { GroupEntry } from './entries.js';
import { bytesBefore, type FileState } from './follow/files.js';
import { parserFor } from './follow/read.js';
import { CHUNK, savedFileNow, type SavedFile } from './follow/persist.js';
import { openWritten, writeIndex, writtenHead, type Written } from './follow/persist-write.js';
import { readIndex, type ColdFile } from './follow/persist-read.js';
import { fileIdentity } from './cache/identity.js';
import type { GroupKey } from './log-types.js';
import { TimeSlice } from '../util/slice';
import type { PersistOptions, SaveExtras } from './run-index-types.js';
import { RunIndexUpdate } from './run-index-update.js';

export abstract class RunIndexSaved extends RunIndexUpdate {
  /**
   * Per-group data saved with the index, for the groups restored as they were (`restoredExtras`):
   * `extras[i]` of the group of id `ids[i]` (`idOf`) restored with `versions[i]`; `writes`: the assembler's table
   * as restored (no version changed while it is the same).
   */
  protected restored?: { tag: string | null; ids: number[]; versions: number[]; extras: unknown[]; runExtra: unknown; writes: number };
  /** The heavy records of the persisted index restored at open (cold groups are read back from it). */
  protected cold?: ColdFile;

  /**
   * Takes what a persisted index knows (follow/persist.ts) before the initial scan: the files that
   * are unchanged or were appended to keep their reading state (the scan then reads nothing, or
   * their new bytes); the groups of every other file are dropped and the file read from scratch.
   */
  protected async restoreSaved(p: PersistOptions): Promise<void> {
    if (p.distrust) {
      this.persisted = { state: 'rebuilt', trusted: 0, reread: 0, why: p.distrust };
      return;
    }
    const { lightIn, lightUnpack } = this;
    // used once: what they fill is their owner's to keep or drop
    this.lightIn = undefined;
    this.lightUnpack = undefined;
    // each head goes to the assembler as its record is read (never an array of every head)
    const ids: number[] = [];
    const versions: number[] = [];
    const r = await readIndex(
      p.file,
      p.key,
      {
        expect: (groups) => this.asm.reserve(groups),
        head: (h, counted) => {
          ids.push(this.asm.restoreGroup(h, counted));
          versions.push(h.version);
        },
      },
      lightIn,
      lightUnpack,
    );
    if (!r.ok) {
      this.asm.reset();
      if (r.why !== 'none') {
        this.persisted = { state: 'rebuilt', trusted: 0, reread: 0, why: r.why };
        this.notice({ level: 'info', message: `${p.file}: saved index not used (${r.why}); the run is read from its logs and the index saved again`, file: p.file });
      }
      return;
    }
    const { header, extras, runExtra } = r.saved;
    this.cold = r.saved.cold;
    const trusted = new Set<string>();
    const slice = new TimeSlice();
    for (const f of header.files) {
      if (savedFileNow(f.identity) !== 'changed') trusted.add(f.identity.path);
      if (slice.due) await slice.next();
    }
    for (const _ of this.asm.restore(header.asm)) if (slice.due) await slice.next();
    const writes = this.asm.entries.writes; // the groups as restored (`restoredExtras`)
    const scratch = new Change();
    for (const [path] of header.asm.files) if (!trusted.has(path)) this.asm.dropFile(path, scratch);
    for (const f of header.files) {
      if (!trusted.has(f.identity.path)) continue;
      const { parser, ...rest } = f.state;
      const fs: FileState = { ...rest };
      if (parser) (fs.parser = parserFor(this.ctx, fs)).restoreState(parser);
      this.files.set(fs.path, fs);
      if (fs.notLog) this.notLogs.add(fs.path);
    }
    for (const k of header.runOnce) this.runOnce.add(k);
    this.notLogsReported = this.notLogs.size;
    for (const n of header.notices) if (!n.file || trusted.has(n.file) || !header.files.some((f) => f.identity.path === n.file)) this.notice(n);
    this.restored = { tag: header.extraTag, ids, versions, extras, runExtra, writes };
    this.persisted = { state: 'restored', trusted: trusted.size, reread: header.files.length - trusted.size };
  }

  protected thaw(e: GroupEntry): GroupEntry {
    if (!this.cold || !e.cold) throw new Error(`group ${e.key} is cold without a saved index to read it from`);
    const full = this.readBack(this.cold, e);
    this.thawed.set(e.key, { version: e.version, chunk: e.cold.chunk });
    return full;
  }

  /**
   * Head e's group read back from `cold`, as the head is now: its record is as it was saved, and a
   * head changes in place since (its version at a restore; completed by idleness, the assembler's
   * `complete`).
   */
  protected readBack(cold: ColdFile, e: GroupEntry): GroupEntry {
    const full = this.loadCold(cold, e.key, e.cold!.chunk).entry;
    delete full.cold;
    full.version = e.version;
    full.complete = e.complete;
    return full;
  }

  /** Restored groups read back into memory since, with the version they were restored with. */
  protected thawed = new Map<GroupKey, { version: number; chunk: number }>();

  /**
   * The per-group data saved with a group restored from the persisted index and unchanged since
   * (the full form: `restoredExtras` gives the light one). Undefined for any other group.
   */
  savedExtra(key: GroupKey): unknown {
    const e = this.asm.entries.get(key);
    if (!e || !this.cold) return undefined;
    const t = this.thawed.get(key);
    const chunk = e.cold?.chunk ?? (t && t.version === e.version ? t.chunk : undefined);
    return chunk === undefined ? undefined : this.loadCold(this.cold, key, chunk).extra;
  }

  protected readonly corruptListeners = new Set<(why: string) => void>();
  protected corruptSaid = false;

  /**
   * A cold group read back from the saved index. Each record is checked against its SHA-1 as it is
   * read (never all of them in the background: an idle window with a huge run open uses no CPU), so
   * nothing unchecked is used; a record found corrupt, cut short or foreign fails this read with its
   * error and makes the owner read the run again from its logs (`onSavedCorrupt`), once.
   */
  protected loadCold(cold: ColdFile, key: GroupKey, chunk: number): { entry: GroupEntry; extra: unknown } {
    try {
      return cold.load(key, chunk);
    } catch (err) {
      if (!this.corruptSaid && !this.closed) {
        this.corruptSaid = true;
        const why = errorMessage(err);
        this.notice({ level: 'info', message: `${cold.path}: saved index not used (${why}); the run is read from its logs and the index saved again`, file: cold.path });
        // after this call has failed: the owner replaces this index, not under its caller
        setImmediate(() => {
          if (!this.closed) for (const l of this.corruptListeners) l(why);
        });
      }
      throw err;
    }
  }

  /**
   * Called when a record of the restored saved index is found corrupt as it is read (the groups
   * read from it so far were checked one by one; the owner reads the run again, `distrust`).
   */
  onSavedCorrupt(listener: (why: string) => void): { dispose(): void } {
    this.corruptListeners.add(listener);
    return { dispose: () => this.corruptListeners.delete(listener) };
  }

  /**
   * Per-group data saved with the index by `save` (with `tag`), for the groups restored at open
   * and unchanged since (the same version when iterated). Empty when the tag differs or nothing was
   * restored. Given once: the index lets go of them. Lazy, so that a caller walking a huge run in
   * slices never waits for one pass over every group. By group id (`idOf`, `keyOf`): no key made.
   */
  restoredExtras(tag: string): Iterable<[number, unknown]> {
    const r = this.restored;
    this.restored = undefined;
    if (!r || r.tag !== tag) return [];
    this.restoredRun = { tag: r.tag, value: r.runExtra };
    const held = this.asm.entries;
    return (function* () {
      for (let i = 0; i < r.ids.length; i++) {
        const id = r.ids[i];
        // a group changed since (a dropped file, the scan after) has another version; none did
        // while the table was not written to (no lookup per group then)
        if (r.extras[i] !== undefined && (held.writes === r.writes || held.versionOfId(id) === r.versions[i])) yield [id, r.extras[i]] as [number, unknown];
      }
    })();
  }

  protected restoredRun?: { tag: string | null; value: unknown };

  /** The run-level data saved with the index under `tag` (after `restoredExtras`; given once). */
  restoredRunExtra(tag: string): unknown {
    const r = this.restoredRun;
    this.restoredRun = undefined;
    return r && r.tag === tag ? r.value : undefined;
  }

  /**
   * Saves the index (follow/persist.ts), between two updates (none runs meanwhile); `extra` adds
   * per-group data under a tag. `checkpoint`: a save to bound what is held in memory, not synced
   * to disk (`SaveSource.sync`). Resolves to the bytes written (0: nothing to persist to, or failed:
   * a notice says why).
   */
  save(extra?: SaveExtras, opts: { checkpoint?: boolean } = {}): Promise<number> {
    const p = this.opts.persist;
    if (!p) return Promise.resolve(0);
    let started = false;
    let finished!: (bytes: number) => void;
    const done = new Promise<number>((r) => (finished = r));
    const run = async (reading?: FileState): Promise<boolean> => {
      if (started) return true;
      started = true;
      let bytes = 0;
      try {
        if (!this.closed) {
          const w = await this.write(p, extra, reading, !opts.checkpoint);
          if (w === null) {
            started = false; // the file changed as it was read: at the next boundary, or after the update
            return false;
          }
          bytes = w;
        }
      } catch (err) {
        finished(0);
        throw err;
      }
      finished(bytes);
      return true;
    };
    // During the initial read, at its next record boundary (`runEarly`): a huge first open would
    // otherwise hold every group read in memory until its end.
    if (this.initial) this.early.push(run);
    const later = async () => void (await run());
    this.chain = this.chain.then(later, later);
    return done;
  }

  /** Whether `fs`'s file is as it was when its read began (no byte written since: its times and size are as then). */
  protected async unchangedSinceRead(fs: FileState): Promise<boolean> {
    try {
      const st = await stat(fs.path);
      return st.ino === fs.ino && st.dev === fs.dev && st.size === fs.size && st.mtimeMs === fs.mtimeMs && st.ctimeMs === fs.ctimeMs;
    } catch {
      return false;
    }
  }

  protected async write(p: PersistOptions, extra: SaveExtras | undefined, reading: FileState | undefined, sync: boolean): Promise<number | null> {
    const files: SavedFile[] = [];
    const slice = new TimeSlice();
    for (const fs of this.files.values()) {
      if (slice.due) await slice.next();
      let identity: SavedFile['identity'];
      const { parser, ...rest } = fs;
      const state: SavedFile['state'] = parser ? { ...rest, parser: parser.state() } : rest;
      try {
        if (fs === reading) {
          // Part way through: saved as the file was up to its last record read, so the next open
          // finds it appended to and reads on from there. Only a file not written to since its
          // read began (its hashes are of the bytes read: checked after they are taken); else the
          // save waits (null).
          if (!(await this.unchangedSinceRead(fs))) return null;
          identity = { ...fileIdentity(fs.path, fs.consumed), mtimeMs: fs.mtimeMs, ctimeMs: fs.ctimeMs };
          state.size = fs.consumed;
          state.partial = false;
          state.format = parser?.format ?? fs.format;
          state.tail = await bytesBefore(fs.path, fs.consumed);
          if (!(await this.unchangedSinceRead(fs))) return null;
        } else {
          // the bytes as they were read (size, times): a change since is seen at the next open
          identity = { ...fileIdentity(fs.path, fs.size), mtimeMs: fs.mtimeMs, ctimeMs: fs.ctimeMs };
        }
      } catch {
        continue; // gone: read again (or dropped) at the next open
      }
      files.push({ identity, state });
    }
    try {
      // saved in the order of a fresh read (part way through an update, the groups read since its
      // last emit may not be yet)
      if (this.asm.reorder()) this.reorderedBySave = true;
      const cold = this.cold;
      const table = this.asm.entries;
      const written = await writeIndex(
        p.file,
        { key: p.key, files, asm: this.asm.snapshot(true), notices: [...this.history], extraTag: extra?.tag ?? null, runOnce: [...this.runOnce] },
        {
          count: table.size,
          slots: table.slots(),
          head: (k) => table.get(k)!,
          load: (e) => {
            if (!cold || !e.cold) throw new Error(`group ${e.key} is cold without a saved index to read it from`);
            return this.readBack(cold, e);
          },
          countedOf: (k) => this.asm.countedSizeOf(k),
          savedExtra: (e) => this.savedExtra(e.key),
          extraOf: extra?.of,
          unchanged: extra?.unchanged,
          lightOf: extra?.light,
          lightPack: extra?.lightPack,
          savedLight: extra?.savedLight,
          cold,
          runExtra: extra?.run,
          sync,
        },
      );
      this.lastWrite = { bytes: written.bytes, copied: written.copied, copiedLight: written.copiedLight, chunks: written.chunks, partial: reading !== undefined };
      await this.coolAfterSave(p.file, written);
      return written.bytes;
    } catch (err) {
      this.notice({ level: 'info', message: `${p.file}: cannot save the index (${errnoCode(err) ?? errorMessage(err)})`, file: p.file });
      return 0;
    }
  }

  /** The last save's size, records copied from the index it replaced, records in all, and whether it was part way through a file. */
  lastWrite?: { bytes: number; copied: number; copiedLight: number; chunks: number; partial: boolean };

  /**
   * After a save, the groups written go to disk: a complete group becomes a head read back from the
   * new file (`group`), the heads already cold point into it, and the old file is let go. So the
   * host holds a head per group after a first open or a re-score too, not only after a restore.
   * Within the update chain: nothing changed the groups since they were written.
   */
  protected async coolAfterSave(file: string, w: Written): Promise<void> {
    const next = await openWritten(file, w);
    if (!next) return;
    if (this.closed) return next.close();
    // First, at once, whatever points into a saved file points into the new one: a cold head to its
    // new record, a group read back for good to its new record (`thawed`). The records copied with
    // their light record hold the same groups at the same number: nothing of theirs changes.
    const thawed = new Map<GroupKey, { version: number; chunk: number }>();
    const cool: number[] = [];
    const held = this.asm.entries;
    const { rewritten } = w;
    rewritten.forEach(({ index, entry: e }, i) => {
      // unchanged since it was written (a version is never reused)
      if (held.versionOf(e.key) !== e.version) return;
      const chunk = Math.floor(index / CHUNK);
      if (e.cold) held.moveCold(e.key, chunk);
      else if (e.complete && !this.asm.hasTurns(e.key)) cool.push(i);
      else thawed.set(e.key, { version: e.version, chunk });
    });
    const old = this.cold;
    this.cold = next;
    this.thawed = thawed;
    old?.close();
    // Then, in slices (a head is built per group), the complete groups become heads. Within the
    // update chain, so nothing changes a group meanwhile (one replaced all the same is left as it is).
    const slice = new TimeSlice();
    for (const i of cool) {
      const { index, entry: e } = rewritten[i];
      if (held.versionOf(e.key) === e.version && !this.closed) held.set(e.key, writtenHead(e, index));
      if (slice.due) await slice.next();
    }
  }
}
