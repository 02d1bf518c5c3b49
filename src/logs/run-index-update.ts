// RunIndex's update side (run-index.ts has the overview): the per-file state, the one-update-at-a-
// time chain and its change events, the scan of the run's files, each file's check and incremental
// read, completion by idleness, and where a save asked for during the initial read may run (a
// record boundary). Restore and save (run-index-saved.ts) extend it: they touch the same per-file
// state and run inside the same chain.
import type { Stats } from 'node:fs';
import { asError, errnoCode, errorMessage, errorName } from '../util/errors';
import { readFile as readFileFs, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { isJsonlName, isNotLogName, PROBE_BYTES } from './parse.js';
import { notLogSummary } from './describe.js';
import { Change, GroupAssembler } from './assemble.js';
import type { GroupEntry } from './entries.js';
import { fileChange, newFileState, type FileState } from './follow/files.js';
import { readFileIncrement, type ReadContext } from './follow/read.js';
import { RunWatcher } from './follow/watch.js';
import type { GroupKey, Notice, ParsedRecord } from './log-types.js';
import { compareRunPaths, listRunFiles } from './walk.js';
import type { PersistOptions, PersistedOpen, RunChange, RunIndexOptionsOf, RunProgress } from './run-index-types.js';

/** Small files are read ahead concurrently at a scan. */
const PRELOAD_MAX = 256 * 1024;

/** A group below its stream's usual size completes by idleness only after this many idle periods. */
const UNDER_SIZE_IDLE = 10;

export abstract class RunIndexUpdate {
  readonly root: string;
  mode: 'watch' | 'poll' | 'static' = 'static';
  protected readonly folderRoot: string;
  protected readonly isDir: boolean;
  protected readonly asm: GroupAssembler;
  protected readonly files = new Map<string, FileState>();
  protected readonly listeners: Array<(e: RunChange) => void> = [];
  protected readonly notice: (n: Notice) => void;
  protected lightIn?: (x: unknown) => unknown;
  protected lightUnpack?: (p: unknown) => unknown[];
  protected readonly opts: { follow: boolean; poll: boolean; pollMs: number; idleMs: number; safetyScanMs: number; streamMs: number; persist?: PersistOptions };
  protected readonly notLogs = new Set<string>();
  protected notLogsReported = 0;
  protected readonly onProgress?: (p: RunProgress) => void;
  protected readonly signal?: AbortSignal;
  /** Set during the initial read. */
  protected progress?: RunProgress & { last: number };
  protected watcher?: RunWatcher;
  protected chain: Promise<void> = Promise.resolve();
  protected closed = false;
  protected readonly runOnce = new Set<string>();
  protected readonly ctx: ReadContext;
  /** Warnings and errors so far (a persisted index replays them), the last 500. */
  protected readonly history: Notice[] = [];
  /** What a persisted index gave at open. */
  persisted: PersistedOpen = { state: 'none', trusted: 0, reread: 0 };
  /** Log bytes read by the initial read (0: everything came from a persisted index). */
  bytesReadAtOpen = 0;

  protected constructor(root: string, isDir: boolean, opts: RunIndexOptionsOf<never>) {
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

  protected checkAbort(): void {
    if (this.signal?.aborted) {
      const e = new Error(`reading ${this.root} was cancelled`);
      e.name = 'AbortError';
      throw e;
    }
  }

  protected tick(bytes: number, force = false): void {
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

  protected async start(): Promise<void> {
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

  protected idleTimer?: NodeJS.Timeout;

  /**
   * The idle check (groups completed by idleness, a parquet file that keeps failing) runs only
   * while there is something for it: a followed run whose groups are all complete sets no timer.
   */
  protected armIdle(): void {
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
  protected enqueue(fn: (ch: Change) => Promise<void>): Promise<void> {
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
  protected initial?: Change;
  protected streamedAt = Date.now();

  /** The initial read's changes so far to the listeners, every `streamMs`, then counted anew (a group announced and changed later is `changed`). */
  protected stream(): void {
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
  protected emit(ch: Change): void {
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
  protected async scan(ch: Change, initial: boolean): Promise<void> {
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

  protected fileFailed(path: string, err: Error): void {
    const fs = this.files.get(path);
    const code = errnoCode(err) ?? err.message;
    if (fs?.failed === code) return; // reported once until it changes
    this.notice({ level: 'error', message: `${path}: read error (${code}); skipped, the rest of the run is read`, file: path });
    if (fs) fs.failed = code;
  }

  protected async checkPath(path: string, ch: Change): Promise<void> {
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
  protected dropFile(path: string, ch: Change, why: 'deleted' | 'replaced' | 'truncated' | 'rewritten'): void {
    if (why === 'deleted') this.files.delete(path);
    for (let i = this.history.length - 1; i >= 0; i--) if (this.history[i].file === path) this.history.splice(i, 1);
    const dropped = this.asm.dropFile(path, ch);
    if (why === 'deleted' || dropped > 0) {
      const what = why === 'deleted' ? 'deleted' : `${why}; re-reading it from the start`;
      this.notice({ level: why === 'deleted' ? 'warning' : 'info', message: `${path}: file ${what} (${dropped} roll-outs dropped)`, file: path });
    }
  }

  protected async checkFile(path: string, st: Stats | undefined, ch: Change, preloaded?: Buffer, event = false): Promise<void> {
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

  protected async completeIdle(ch: Change): Promise<void> {
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

  /** A save part way through an update put the groups in order (its listeners are told at the update's next emit). */
  protected reorderedBySave = false;

  /** Saves asked for during the initial read, run at its next record boundary (`save`). */
  protected early: Array<(reading?: FileState) => Promise<boolean>> = [];
  /** A file that changed as it was read: no save part way through it (its bytes read may not be its bytes now). */
  protected earlyBlocked?: FileState;

  /** Whether a save waits for a record boundary of `fs` (`early`). */
  protected saveWaiting(fs?: FileState): boolean {
    return this.early.length > 0 && (fs === undefined || fs !== this.earlyBlocked);
  }

  /** Runs the saves waiting (`early`) now, between two records of file `reading` (or between two files). */
  protected async runEarly(reading?: FileState): Promise<void> {
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

  /** Restores the saved index before the initial scan (run-index-saved.ts). */
  protected abstract restoreSaved(p: PersistOptions): Promise<void>;
  /** A cold group read back from the saved index (run-index-saved.ts). */
  protected abstract thaw(e: GroupEntry): GroupEntry;
}
