// RunIndex: a run's groups as the engine needs them, followable while the training loop writes.
// Long file: one job, running the parts below one update at a time; restore and save touch the same
// per-file state as an update and must not interleave with one, so they live beside it.
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
// This module runs them: one update at a time, and the change events.
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
import { asError, errnoCode, errorMessage, errorName } from '../util/errors';
import { readFile as readFileFs, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { Group } from '../engine';
import { isJsonlName, isNotLogName, PROBE_BYTES } from './parse.js';
import { notLogSummary } from './describe.js';
import { readRolloutText as readText } from './texts.js';
import { Change, GroupAssembler } from './assemble.js';
import { confidentCount, entryToGroup, rolloutsOf, type GroupEntry, type GroupHead } from './entries.js';
import { bytesBefore, fileChange, newFileState, type FileState } from './follow/files.js';
import { parserFor, readFileIncrement, type ReadContext } from './follow/read.js';
import { RunWatcher } from './follow/watch.js';
export { SAVED_EXTRA } from './follow/persist.js';
import { CHUNK, openWritten, readIndex, savedFileNow, writeIndex, writtenHead, type ColdFile, type SavedFile, type Written } from './follow/persist.js';
import { fileIdentity } from './cache/identity.js';
import type { GroupKey, LogFormat, Notice, ParsedRecord, RolloutSource } from './log-types.js';
import type { GroupSize } from './group-table.js';
import type { KeyIndex } from './key-index.js';
import { compareRunPaths, listRunFiles } from './walk.js';
import { TimeSlice } from '../util/slice';

export type { GroupEntry } from './entries.js';
export { entryToGroup, orderRollouts, rolloutsOf, type GroupHead } from './entries.js';

export interface RunChange {
  removed: GroupKey[];
  added: GroupKey[];
  completed: GroupKey[];
  changed: GroupKey[];
  /** Groups still open whose size changed (nothing else to redo for them: they were never complete). */
  grown: GroupKey[];
  /** The groups were put in a new order (a file re-read, a new file sorting before others): not only appended to. */
  rearranged: boolean;
}

export interface RunIndexOptions {
  follow: boolean;
  /** Force polling (network file systems). */
  poll?: boolean;
  onNotice: (n: Notice) => void;
  pollMs?: number;
  idleMs?: number;
  safetyScanMs?: number;
  /** Progress of the initial read (throttled to ~10 per second, and once at the end). */
  onProgress?: (p: RunProgress) => void;
  /**
   * Called with the index before its initial read: a listener subscribed here (`onDidChange`) sees
   * the initial read's groups as they are read — in batches, after each file and every `streamMs`
   * (default 1000) within one — not only once `open` resolves.
   */
  onStart?: (index: RunIndex) => void;
  streamMs?: number;
  /** Bytes read from a log file at a time (default 1 MiB; tests make it small, so that a read streams, and saves, part way through a file). */
  readBlock?: number;
  /** Cancels the initial read: `open` then rejects with an AbortError and nothing keeps running. */
  signal?: AbortSignal;
  /** 'ignore': logged ground truth is dropped as it is read. Default 'auto'. */
  groundTruth?: 'auto' | 'use' | 'ignore';
  /**
   * A persisted index (follow/persist.ts; a followed run only): restored at open when valid (files
   * unchanged or appended to are not read again), written by `save`. `key`: see cacheKey.
   * `lightIn`: each saved extra's light form as it is decoded, turned at once into what its owner
   * keeps (the store: a row of its summary columns), so that a huge run's restore leaves no object
   * per group behind to collect; `restoredExtras` then gives what it returned.
   */
  persist?: PersistOptions;
}

export interface PersistOptions {
  file: string;
  key: string;
  distrust?: string;
  lightIn?: (x: unknown) => unknown;
  /** A record's light forms packed by `SaveExtras.lightPack` → what `restoredExtras` gives for each of its groups. */
  lightUnpack?: (p: unknown) => unknown[];
}

/** What a save writes beside the groups (the extension: the explorer's question summaries). */
export interface SaveExtras {
  /** What the extras were computed for; restored only under the same tag. */
  tag: string;
  /** A group's extra, or SAVED_EXTRA for the one saved with it before (under this tag). */
  of: (e: GroupEntry) => unknown;
  /** The light form of an extra, read at open with the groups' heads (the full one stays with the group). */
  light?: (x: unknown) => unknown;
  /** One saved record's light forms packed into one value (follow/persist.ts `SaveSource.lightPack`). */
  lightPack?: (xs: unknown[]) => unknown;
  /**
   * The light form of the extra saved with a group, for a group whose `of` is SAVED_EXTRA (the
   * one saved before, under this tag): with it, a record whose groups are all unchanged and all
   * SAVED_EXTRA is copied, not written again.
   */
  savedLight?: (e: GroupEntry) => unknown;
  /** Whether `of` would give SAVED_EXTRA for the group, known without building it (false when unsure): what lets a record be copied. */
  unchanged?: (key: GroupKey) => boolean;
  /** Run-level data, restored under the same tag. */
  run?: unknown;
}

/** How the persisted index served the open. */
export interface PersistedOpen {
  state: 'none' | 'restored' | 'rebuilt';
  /** Files taken from it (unchanged or appended to), and read again from scratch. */
  trusted: number;
  reread: number;
  /** Why it was not used ('rebuilt'). */
  why?: string;
}

export interface RunProgress {
  bytesRead: number;
  totalBytes: number;
  filesRead: number;
  totalFiles: number;
  groups: number;
}

export interface ConfidenceSummary {
  rollouts: number;
  /** Roll-outs with a mean token log-prob (c_i). */
  withConfidence: number;
  formats: LogFormat[];
  /** Why confidences are missing (all or some), or null when every roll-out has one. */
  why: string | null;
}

/** Why a format's roll-outs come without confidence. */
const NO_CONFIDENCE: Record<LogFormat, string> = {
  native: 'the log has no mean_logprob / token_logprobs',
  verl: 'verl dumps carry no log-probs (the consensus_lens helpers add rollout_log_probs)',
  trl: 'TRL completions logs carry no log-probs',
  wandb: 'W&B tables carry no log-probs',
  'nemo-rl': 'the NeMo RL log has no generation_logprobs',
  'prime-rl': 'the prime-rl roll-outs have no trajectory completion_logprobs',
  skyrl: 'SkyRL evaluation dumps carry no log-probs',
  miles: 'miles trajectory dumps carry no log-probs (they are in its dashboard_columns parquet, not read)',
};

/** Small files are read ahead concurrently at a scan. */
const PRELOAD_MAX = 256 * 1024;

/** A group below its stream's usual size completes by idleness only after this many idle periods. */
const UNDER_SIZE_IDLE = 10;

export class RunIndex {
  readonly root: string;
  mode: 'watch' | 'poll' | 'static' = 'static';
  private readonly folderRoot: string;
  private readonly isDir: boolean;
  private readonly asm: GroupAssembler;
  private readonly files = new Map<string, FileState>();
  private readonly listeners: Array<(e: RunChange) => void> = [];
  private readonly notice: (n: Notice) => void;
  private lightIn?: (x: unknown) => unknown;
  private lightUnpack?: (p: unknown) => unknown[];
  private readonly opts: { follow: boolean; poll: boolean; pollMs: number; idleMs: number; safetyScanMs: number; streamMs: number; persist?: PersistOptions };
  private readonly notLogs = new Set<string>();
  private notLogsReported = 0;
  private readonly onProgress?: (p: RunProgress) => void;
  private readonly signal?: AbortSignal;
  /** Set during the initial read. */
  private progress?: RunProgress & { last: number };
  private watcher?: RunWatcher;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly runOnce = new Set<string>();
  private readonly ctx: ReadContext;
  /** Warnings and errors so far (a persisted index replays them), the last 500. */
  private readonly history: Notice[] = [];
  /** What a persisted index gave at open. */
  persisted: PersistedOpen = { state: 'none', trusted: 0, reread: 0 };
  /** Log bytes read by the initial read (0: everything came from a persisted index). */
  bytesReadAtOpen = 0;
  /**
   * Per-group data saved with the index, for the groups restored as they were (`restoredExtras`):
   * `extras[i]` of the group of id `ids[i]` (`idOf`) restored with `versions[i]`; `writes`: the assembler's table
   * as restored (no version changed while it is the same).
   */
  private restored?: { tag: string | null; ids: number[]; versions: number[]; extras: unknown[]; runExtra: unknown; writes: number };
  /** The heavy records of the persisted index restored at open (cold groups are read back from it). */
  private cold?: ColdFile;

  private constructor(root: string, isDir: boolean, opts: RunIndexOptions) {
    this.root = root;
    this.isDir = isDir;
    this.folderRoot = isDir ? root : dirname(root);
    this.notice = (n) => {
      if (n.level !== 'info') {
        this.history.push(n);
        if (this.history.length > 500) this.history.shift();
      }
      opts.onNotice(n);
    };
    this.opts = { follow: opts.follow, poll: opts.poll ?? false, pollMs: opts.pollMs ?? 1000, idleMs: opts.idleMs ?? 2000, safetyScanMs: opts.safetyScanMs ?? 10_000, streamMs: opts.streamMs ?? 1000, persist: opts.follow && opts.persist ? { file: opts.persist.file, key: opts.persist.key, distrust: opts.persist.distrust } : undefined };
    this.lightIn = opts.follow ? opts.persist?.lightIn : undefined;
    this.lightUnpack = opts.follow ? opts.persist?.lightUnpack : undefined;
    this.onProgress = opts.onProgress;
    this.signal = opts.signal;
    this.asm = new GroupAssembler({ policy: opts.follow ? 'followed' : 'one-shot', onNotice: this.notice, ignoreTruth: opts.groundTruth === 'ignore', order: compareRunPaths, thaw: (e) => this.thaw(e) });
    this.ctx = {
      folderRoot: this.folderRoot,
      isDir,
      follow: opts.follow,
      notice: this.notice,
      runOnce: this.runOnce,
      notLogs: this.notLogs,
      add: (rec: ParsedRecord, fs: FileState, ch: Change) => void this.asm.add(rec, fs.format ?? fs.parser?.format ?? 'native', ch),
      drop: (path, ch, why) => this.dropFile(path, ch, why),
      block: opts.readBlock,
      saveWaiting: (fs) => this.saveWaiting(fs),
      checkpoint: (fs) => this.runEarly(fs),
      progress: (bytes) => {
        if (!this.progress) return;
        this.checkAbort();
        this.tick(bytes);
      },
    };
  }

  private checkAbort(): void {
    if (this.signal?.aborted) {
      const e = new Error(`reading ${this.root} was cancelled`);
      e.name = 'AbortError';
      throw e;
    }
  }

  private tick(bytes: number, force = false): void {
    const p = this.progress;
    if (!p) return;
    p.bytesRead += bytes;
    const now = Date.now();
    this.stream();
    if (!this.onProgress || (!force && now - p.last < 100)) return;
    p.last = now;
    p.groups = this.asm.size;
    const { last: _l, ...out } = p;
    this.onProgress(out);
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

  private async start(): Promise<void> {
    if (this.opts.follow) {
      const w = new RunWatcher({
        root: this.root,
        isDir: this.isDir,
        folderRoot: this.folderRoot,
        poll: this.opts.poll,
        pollMs: this.opts.pollMs,
        safetyScanMs: this.opts.safetyScanMs,
        notice: this.notice,
        onDirty: (all, files) =>
          void this.enqueue(async (ch) => {
            if (all) await this.scan(ch, false);
            else for (const f of files) await this.checkPath(f, ch);
          }),
      });
      this.watcher = w;
      await w.start();
      this.mode = w.mode;
    }
    let aborted: Error | undefined;
    await this.enqueue(async (ch) => {
      this.initial = ch;
      try {
        if (this.opts.persist) await this.restoreSaved(this.opts.persist);
        await this.scan(ch, true);
      } catch (err) {
        if (errorName(err) === 'AbortError') return void (aborted = asError(err));
        throw err;
      }
      if (!this.opts.follow) this.asm.endOfInput(ch);
      this.asm.endOfInitialRead();
      this.tick(0, true);
      this.bytesReadAtOpen = this.progress?.bytesRead ?? 0;
      this.progress = undefined;
    });
    if (aborted) throw aborted;
  }

  private idleTimer?: NodeJS.Timeout;

  /**
   * The idle check (groups completed by idleness, a parquet file that keeps failing) runs only
   * while there is something for it: a followed run whose groups are all complete sets no timer.
   */
  private armIdle(): void {
    if (!this.opts.follow || this.closed || this.idleTimer) return;
    let pending = this.asm.lastUpdate.size > 0;
    if (!pending) for (const fs of this.files.values()) if (fs.parquetPending && !fs.parquetPending.reported) pending = true;
    if (!pending) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      void this.enqueue(async (ch) => this.completeIdle(ch));
    }, Math.max(50, Math.min(500, this.opts.idleMs / 4)));
  }

  /** Runs one update at a time; emits its changes. */
  private enqueue(fn: (ch: Change) => Promise<void>): Promise<void> {
    const run = async () => {
      if (this.closed) return;
      const ch = new Change();
      try {
        await fn(ch);
      } catch (err) {
        this.notice({ level: 'error', message: `${this.root}: ${errorMessage(err)}` });
      }
      if (!this.closed) this.emit(ch);
      this.initial = undefined;
      this.early = []; // run by the chain (each runs once)
      this.earlyBlocked = undefined;
      this.armIdle();
    };
    this.chain = this.chain.then(run, run);
    return this.chain;
  }

  /** The initial read's changes so far (`onStart`). */
  private initial?: Change;
  private streamedAt = Date.now();

  /** The initial read's changes so far to the listeners, every `streamMs`, then counted anew (a group announced and changed later is `changed`). */
  private stream(): void {
    const ch = this.initial;
    if (Date.now() - this.streamedAt < this.opts.streamMs) return;
    this.streamedAt = Date.now();
    if (!ch || ch.empty || !this.listeners.length || this.closed) return;
    this.emit(ch);
    ch.removed.clear();
    ch.added.clear();
    ch.completed.clear();
    ch.changed.clear();
    ch.grown.clear();
  }

  /** An update's changes to the listeners, the groups first put in the order of a fresh read. */
  private emit(ch: Change): void {
    if (ch.empty) return;
    // a file re-read, or a new file that sorts before others: the order of a fresh read
    const rearranged = ((ch.added.size > 0 || ch.changed.size > 0) && this.asm.reorder()) || this.reorderedBySave;
    this.reorderedBySave = false;
    const entries = this.asm.entries;
    const present = (k: GroupKey) => entries.has(k);
    const e: RunChange = {
      removed: [...ch.removed],
      added: [...ch.added].filter(present),
      completed: [...ch.completed].filter((k) => entries.get(k)?.complete),
      changed: [...ch.changed].filter((k) => present(k) && !ch.added.has(k)),
      grown: [...ch.grown].filter((k) => present(k) && !ch.added.has(k) && !ch.changed.has(k)),
      rearranged,
    };
    if (!e.removed.length && !e.added.length && !e.completed.length && !e.changed.length && !e.grown.length) return;
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.notice({ level: 'error', message: `change listener failed: ${errorMessage(err)}` });
      }
    }
  }

  /** Lists the run's files and checks each (new, grown, shrunk, replaced, deleted). */
  private async scan(ch: Change, initial: boolean): Promise<void> {
    const stats = new Map<string, Stats>();
    const dirs = new Set<string>();
    let list: string[];
    try {
      list = await listRunFiles(this.root, initial ? this.notice : () => undefined, stats, dirs);
      this.watcher?.syncDirs(dirs);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') list = [];
      else throw err;
    }
    if (initial && this.isDir && list.length === 0 && !this.opts.follow) {
      this.notice({ level: 'error', message: `${this.root}: no log files in this folder`, file: this.root });
    }
    const present = new Set(list);
    for (const path of [...this.files.keys()]) if (!present.has(path)) this.dropFile(path, ch, 'deleted');
    if (initial) {
      let totalBytes = 0;
      for (const st of stats.values()) totalBytes += st.size;
      this.progress = { bytesRead: 0, totalBytes, filesRead: 0, totalFiles: list.length, groups: 0, last: 0 };
    }
    // New small files are read ahead concurrently (a folder of 10,000 files would otherwise be
    // 10,000 sequential round trips through the I/O thread pool); records are applied in order.
    const WINDOW = 32;
    for (let i = 0; i < list.length; i += WINDOW) {
      const slice = list.slice(i, i + WINDOW);
      const pre = await Promise.all(
        slice.map((p) => {
          const s = stats.get(p);
          if (this.files.has(p) || !s || s.size > PRELOAD_MAX || s.size === 0) return undefined;
          // a file not yet known to be a text log is never read past its first block
          if (isNotLogName(p) || (s.size > PROBE_BYTES && !isJsonlName(p))) return undefined;
          return readFileFs(p).catch(() => undefined);
        }),
      );
      for (let j = 0; j < slice.length; j++) {
        this.checkAbort();
        try {
          await this.checkFile(slice[j], stats.get(slice[j]), ch, pre[j]);
        } catch (err) {
          if (errorName(err) === 'AbortError') throw err;
          // one unreadable file (EIO, ESTALE) never stops the others: name it, skip it, keep going
          this.fileFailed(slice[j], asError(err));
        }
        if (!this.opts.follow) this.asm.endOfFile(slice[j], ch);
        if (this.progress) this.progress.filesRead++;
        if (initial) this.stream();
        if (this.early.length) await this.runEarly();
      }
    }
    if (this.notLogs.size > this.notLogsReported) {
      const n = notLogSummary(this.root, [...this.notLogs]);
      this.notLogsReported = this.notLogs.size;
      if (n) this.notice(n);
    }
    if (!initial) this.asm.sizeSummary();
  }

  /**
   * Takes what a persisted index knows (follow/persist.ts) before the initial scan: the files that
   * are unchanged or were appended to keep their reading state (the scan then reads nothing, or
   * their new bytes); the groups of every other file are dropped and the file read from scratch.
   */
  private async restoreSaved(p: PersistOptions): Promise<void> {
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

  private fileFailed(path: string, err: Error): void {
    const fs = this.files.get(path);
    const code = errnoCode(err) ?? err.message;
    if (fs?.failed === code) return; // reported once until it changes
    this.notice({ level: 'error', message: `${path}: read error (${code}); skipped, the rest of the run is read`, file: path });
    if (fs) fs.failed = code;
  }

  private async checkPath(path: string, ch: Change): Promise<void> {
    if (basename(path).startsWith('.')) return;
    let st: Stats | undefined;
    try {
      st = await stat(path);
    } catch {
      st = undefined;
    }
    if (!st) {
      if (this.files.has(path)) this.dropFile(path, ch, 'deleted');
      // a folder (or a file inside one) disappeared: a rescan settles which files went
      for (const f of this.files.keys()) if (f.startsWith(path + '/')) return void (await this.scan(ch, false));
      return;
    }
    if (st.isDirectory()) return void (await this.scan(ch, false));
    if (st.isFile()) await this.checkFile(path, st, ch, undefined, true);
  }

  /** Drops what a file gave (its groups, its roll-outs in other groups); 'deleted' forgets the file too. */
  private dropFile(path: string, ch: Change, why: 'deleted' | 'replaced' | 'truncated' | 'rewritten'): void {
    if (why === 'deleted') this.files.delete(path);
    for (let i = this.history.length - 1; i >= 0; i--) if (this.history[i].file === path) this.history.splice(i, 1);
    const dropped = this.asm.dropFile(path, ch);
    if (why === 'deleted' || dropped > 0) {
      const what = why === 'deleted' ? 'deleted' : `${why}; re-reading it from the start`;
      this.notice({ level: why === 'deleted' ? 'warning' : 'info', message: `${path}: file ${what} (${dropped} roll-outs dropped)`, file: path });
    }
  }

  private async checkFile(path: string, st: Stats | undefined, ch: Change, preloaded?: Buffer, event = false): Promise<void> {
    if (!st) {
      try {
        st = await stat(path);
      } catch {
        if (this.files.has(path)) this.dropFile(path, ch, 'deleted');
        return;
      }
    }
    let fs = this.files.get(path);
    if (fs) {
      const how = await fileChange(fs, st, event);
      if (how === 'unchanged') return;
      if (how !== 'grown') {
        this.dropFile(path, ch, how);
        this.files.delete(path);
        fs = undefined;
      }
    }
    if (!fs) {
      fs = newFileState(path, st);
      this.files.set(path, fs);
    }
    if (fs.unsupported) {
      fs.size = st.size;
      fs.mtimeMs = st.mtimeMs;
      fs.ctimeMs = st.ctimeMs;
      return;
    }
    await readFileIncrement(this.ctx, fs, st, ch, preloaded && preloaded.length === st.size ? preloaded : undefined);
  }

  private async completeIdle(ch: Change): Promise<void> {
    const now = Date.now();
    const underSizeWait = UNDER_SIZE_IDLE * this.opts.idleMs;
    const writing: string[] = [];
    const recent: string[] = [];
    for (const fs of this.files.values()) {
      if (fs.partial) writing.push(fs.path);
      if (now - fs.mtimeMs < underSizeWait) recent.push(fs.path);
    }
    this.asm.completeIdle(ch, now, this.opts.idleMs, writing, recent, underSizeWait);
    for (const fs of this.files.values()) {
      const p = fs.parquetPending;
      if (p && !p.reported && now - p.since > Math.max(this.opts.idleMs, 5000)) {
        p.reported = true;
        this.notice({ level: 'error', message: p.message, file: fs.path });
      }
    }
  }

  // ---- public API ------------------------------------------------------------------------------

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

  private thaw(e: GroupEntry): GroupEntry {
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
  private readBack(cold: ColdFile, e: GroupEntry): GroupEntry {
    const full = this.loadCold(cold, e.key, e.cold!.chunk).entry;
    delete full.cold;
    full.version = e.version;
    full.complete = e.complete;
    return full;
  }

  /** Restored groups read back into memory since, with the version they were restored with. */
  private thawed = new Map<GroupKey, { version: number; chunk: number }>();

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

  private readonly corruptListeners = new Set<(why: string) => void>();
  private corruptSaid = false;

  /**
   * A cold group read back from the saved index. Each record is checked against its SHA-1 as it is
   * read (never all of them in the background: an idle window with a huge run open uses no CPU), so
   * nothing unchecked is used; a record found corrupt, cut short or foreign fails this read with its
   * error and makes the owner read the run again from its logs (`onSavedCorrupt`), once.
   */
  private loadCold(cold: ColdFile, key: GroupKey, chunk: number): { entry: GroupEntry; extra: unknown } {
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

  private restoredRun?: { tag: string | null; value: unknown };

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

  /** A save part way through an update put the groups in order (its listeners are told at the update's next emit). */
  private reorderedBySave = false;

  /** Saves asked for during the initial read, run at its next record boundary (`save`). */
  private early: Array<(reading?: FileState) => Promise<boolean>> = [];
  /** A file that changed as it was read: no save part way through it (its bytes read may not be its bytes now). */
  private earlyBlocked?: FileState;

  /** Whether a save waits for a record boundary of `fs` (`early`). */
  private saveWaiting(fs?: FileState): boolean {
    return this.early.length > 0 && (fs === undefined || fs !== this.earlyBlocked);
  }

  /** Runs the saves waiting (`early`) now, between two records of file `reading` (or between two files). */
  private async runEarly(reading?: FileState): Promise<void> {
    const waiting = this.early;
    this.early = [];
    for (let i = 0; i < waiting.length; i++) {
      if (await waiting[i](reading)) continue;
      // postponed: the file changed under the read
      this.earlyBlocked = reading;
      this.early.push(...waiting.slice(i));
      return;
    }
  }

  /** Whether `fs`'s file is as it was when its read began (no byte written since: its times and size are as then). */
  private async unchangedSinceRead(fs: FileState): Promise<boolean> {
    try {
      const st = await stat(fs.path);
      return st.ino === fs.ino && st.dev === fs.dev && st.size === fs.size && st.mtimeMs === fs.mtimeMs && st.ctimeMs === fs.ctimeMs;
    } catch {
      return false;
    }
  }

  private async write(p: PersistOptions, extra: SaveExtras | undefined, reading: FileState | undefined, sync: boolean): Promise<number | null> {
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
  private async coolAfterSave(file: string, w: Written): Promise<void> {
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

  close(): void {
    this.closed = true;
    // after the updates queued: a save in progress still reads its cold groups
    void this.chain.then(() => this.cold?.close());
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.watcher?.close();
  }
}
