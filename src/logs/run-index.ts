// RunIndex: a run's groups as the engine needs them, followable while the training loop writes.
//
// What it keeps. Per group: run, step, question_id, prompt, ground truth (diagnostics only),
// outcome checks, and per roll-out the numbers the engine needs (mean log-prob, logged reward,
// pre-extracted answer, verification, sample_idx, format extras) plus the record's byte range
// (file, line, offset, length, and `item` for a roll-out inside a group record). Never the
// roll-out text: `loadGroup` / `readRolloutText` read it back from disk by offset. A long line
// (64 KiB or more) is read as bytes and its texts are not even decoded (skeleton.ts: the rest of
// the line is parsed), in slices that yield to the event loop while following.
//
// Modes. `static` (follow: false): one read. `watch`: fs.watch events on every folder of the run (one
// non-recursive watcher per folder: Node 20's recursive mode on Linux loses events after a file is
// renamed over) or on the parent folder of a single-file run, debounced into a check of the named file, plus
// a full rescan every `safetyScanMs` (10 s) as a safety net. `poll`: a full rescan every `pollMs`
// (1 s); chosen with `poll: true`, when fs.watch is unavailable, or when the run lives on a network
// or cluster file system that delivers no events (NFS, Lustre, GPFS, BeeGFS, CephFS, CIFS/SMB, FUSE
// such as sshfs, 9p) — detected with statfs. `mode` says which; an info notice says so too.
//
// Tail rules (SPEC §2.3). Each file is read from the byte after its last consumed record. A last line
// without a newline is consumed only once it is a complete JSON object (a writer mid-line leaves a
// prefix that does not parse); otherwise it waits. A malformed complete line is skipped and reported
// once (file:line). A file that shrinks, whose inode changes (replaced, e.g. renamed over), or whose
// first bytes change (rewritten in place) is re-read from scratch: its records are dropped and read
// again. A deleted file drops its records with a notice. New files are picked up. A TRL parquet file
// is re-read whole when it changes; while it does not parse (being written) it is retried silently.
//
// When is a group complete (the `completed` event; `watch` prints a group then)?
//   - a group record (native `kind: "group"`, or a TRL parquet group): at once;
//   - roll-out records (native roll-out records, verl lines): when the group reaches the modal
//     group size of its stream (the most common size among complete groups of the same format and
//     run folder: verl's validation and roll-out dumps differ), or when the file that
//     contributed to it has moved on to a later step (verl and NeMo RL: or a later step's file of the
//     same stream has begun), or when it has had no new roll-out for `idleMs` (2 s) — ten times
//     that while it is smaller than its stream's usual size and its file was modified within that
//     time (a writer pausing between lines; a file left alone that long is finished) —, or
//     in a static read at the end of the read. A file whose last line is
//     incomplete is still being written (verl's V1 writer appends line by line from a thread; on
//     NFS/Lustre a pause of seconds mid-line is normal): none of its groups completes by idleness.
//   A roll-out that arrives for a group that is already complete reopens it (a prompt repeated
//   within a step, or a late roll-out): the group's `revision` goes up, and it completes again by
//   the same rules (watch prints it again once, with the size warning that score/report give).
// Duplicates: a second group record for an identity (run, step, question_id), or a roll-out record
// for an identity that came as a group record, is skipped with a warning.
//
// Events: `onDidChange({ removed, added, completed, changed })`, handled in that order; a key can be
// both removed and added in one event (its file was re-read), and then it is a new group.
import { watch, type FSWatcher, type Stats } from 'node:fs';
import { open, readFile as readFileFs, stat, statfs } from 'node:fs/promises';
import { dirname, basename, join, resolve } from 'node:path';
import type { Group, OutcomeCheck, RecordSource, Rollout, Verification } from '../engine/types.js';
import { parseJsonLine } from './json.js';
import { decodeLine, readRawLineBatches } from './lines.js';
import { isJsonlName, isNotLogName, JsonlFileParser, lineStart, PROBE_BYTES, UNSUPPORTED_HINT } from './parse.js';
import { isBlankLine, skeletonOf, type Skeleton } from './skeleton.js';
import { describeGroup, modalSize, notLogSummary, orderRollouts } from './read-run.js';
import { runOfFile } from './records.js';
import { forgetFile, readRolloutText as readText } from './texts.js';
import { readTrlFile } from './trl.js';
import { readWandbTable } from './wandb.js';
import { classify } from './records.js';
import { groupKey, type GroupKey, type LogFormat, type Notice, type ParsedRecord, type RolloutEntry, type RolloutSource } from './types.js';
import { listRunFiles } from './walk.js';

export interface GroupEntry {
  key: GroupKey;
  run?: string;
  step: number;
  questionId: string;
  prompt?: string;
  /** Diagnostics only: never an input to any operator. */
  groundTruth: string | null;
  /** Every accepted form of the ground truth when the log holds several. */
  groundTruthForms?: string[];
  /** 'validation': a validation dump (its own usual group size; no consensus rewards). */
  stream?: 'validation';
  outcomeChecks?: OutcomeCheck[];
  /** The operator the training loop logged for the group (see Group.loggedOperator). */
  loggedOperator?: string;
  /**
   * In sample_idx order when logged, else in file order. For a group record this is built on each
   * read from packed columns (an enumerable own getter, so JSON and structured clone see it): read
   * it once into a variable rather than in a loop, and use `n` to count.
   */
  rollouts: RolloutEntry[];
  /** Number of roll-outs. */
  n: number;
  /** 'group': one group record (or a TRL parquet group); 'rollouts': assembled from roll-out records. */
  origin: 'group' | 'rollouts';
  format: LogFormat;
  complete: boolean;
  /** Goes up each time roll-outs arrive after the group was complete. */
  revision: number;
  /** Where the group's first record is. */
  firstSource: RolloutSource;
}

export interface RunChange {
  removed: GroupKey[];
  added: GroupKey[];
  completed: GroupKey[];
  changed: GroupKey[];
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
  /** Cancels the initial read: `open` then rejects with an AbortError and nothing keeps running. */
  signal?: AbortSignal;
  /** 'ignore': logged ground truth is dropped as it is read. Default 'auto'. */
  groundTruth?: 'auto' | 'ignore';
}

export interface RunProgress {
  bytesRead: number;
  totalBytes: number;
  filesRead: number;
  totalFiles: number;
  groups: number;
}

interface FileState {
  path: string;
  format?: LogFormat;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** Byte offset after the last consumed record. */
  consumed: number;
  nextLine: number;
  head: Buffer;
  /** The bytes just before `consumed` (follow mode): a file rewritten to a larger size is caught by these. */
  tail?: Buffer;
  parser?: JsonlFileParser;
  unsupported: boolean;
  keys: Set<GroupKey>;
  maxStep: number;
  /** The file ends in an incomplete line (a writer mid-line): its groups do not complete by idleness. */
  partial?: boolean;
  /** Not a log (a file of the run folder skipped quietly). */
  notLog?: boolean;
  /** The last read error (reported once). */
  failed?: string;
  /** parquet: the last read failed (being written?) */
  parquetPending?: { since: number; reported: boolean; message: string };
}

const REMOTE_FS: Record<number, string> = {
  0x6969: 'NFS',
  0x0bd00bd0: 'Lustre',
  0x47504653: 'GPFS',
  0x19830326: 'BeeGFS',
  0x00c36400: 'CephFS',
  0xff534d42: 'CIFS',
  0xfe534d42: 'SMB2',
  0x517b: 'SMB',
  0x65735546: 'FUSE',
  0x01021997: '9p',
  0x5346414f: 'AFS',
};

const HEAD = 64;

class Change {
  removed = new Set<GroupKey>();
  added = new Set<GroupKey>();
  completed = new Set<GroupKey>();
  changed = new Set<GroupKey>();
  get empty(): boolean {
    return !this.removed.size && !this.added.size && !this.completed.size && !this.changed.size;
  }
}

export class RunIndex {
  readonly root: string;
  mode: 'watch' | 'poll' | 'static' = 'static';
  private readonly folderRoot: string;
  private readonly isDir: boolean;
  private readonly entries = new Map<GroupKey, GroupEntry>();
  private readonly files = new Map<string, FileState>();
  private readonly lastUpdate = new Map<GroupKey, number>();
  /** Group sizes of complete groups, per stream (format + run folder): the modal-size rule's data. */
  private readonly sizeHist = new Map<string, Map<number, number>>();
  private readonly listeners: Array<(e: RunChange) => void> = [];
  private readonly notice: (n: Notice) => void;
  private readonly opts: Required<Omit<RunIndexOptions, 'onNotice' | 'poll' | 'onProgress' | 'signal' | 'groundTruth'>> & { poll: boolean; ignoreTruth: boolean };
  /** Files of the run folder that are not logs (summed up in one notice after each scan). */
  private readonly notLogs = new Set<string>();
  private notLogsReported = 0;
  /** Multi-turn sessions per group: session → output number kept. */
  private readonly turns = new Map<GroupKey, Map<string, { output: number; source: RolloutSource }>>();
  private readonly onProgress?: (p: RunProgress) => void;
  private readonly signal?: AbortSignal;
  /** Set during the initial read. */
  private progress?: RunProgress & { last: number };
  private watcher?: FSWatcher;
  private dirWatchers = new Map<string, FSWatcher>();
  private timers: NodeJS.Timeout[] = [];
  private debounce?: NodeJS.Timeout;
  private dirtyFiles = new Set<string>();
  private dirtyAll = false;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private initialDone = false;
  private sizeWarnings = 0;
  private readonly runOnce = new Set<string>();

  private constructor(root: string, isDir: boolean, opts: RunIndexOptions) {
    this.root = root;
    this.isDir = isDir;
    this.folderRoot = isDir ? root : dirname(root);
    this.notice = opts.onNotice;
    this.opts = {
      follow: opts.follow,
      poll: opts.poll ?? false,
      pollMs: opts.pollMs ?? 1000,
      idleMs: opts.idleMs ?? 2000,
      safetyScanMs: opts.safetyScanMs ?? 10_000,
      ignoreTruth: opts.groundTruth === 'ignore',
    };
    this.onProgress = opts.onProgress;
    this.signal = opts.signal;
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
    if (!this.onProgress || (!force && now - p.last < 100)) return;
    p.last = now;
    p.groups = this.entries.size;
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
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot read (${code ?? (err as Error).message})`);
    }
    const idx = new RunIndex(root, st.isDirectory(), opts);
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
      let remote: string | undefined;
      try {
        const fsinfo = await statfs(this.folderRoot);
        remote = REMOTE_FS[Number(fsinfo.type) >>> 0];
      } catch {
        /* statfs unsupported: assume local */
      }
      if (!this.opts.poll && !remote) {
        try {
          if (this.isDir) this.watchDir(this.root);
          else {
            this.watcher = watch(this.folderRoot, {}, (_ev, name) => {
              if (!name || name.toString() === basename(this.root)) this.onEvent(this.root);
            });
            this.watcher.on('error', (err) => this.watchFailed(err));
          }
          this.mode = 'watch';
        } catch (err) {
          this.notice({ level: 'info', message: `${this.root}: file events unavailable (${(err as Error).message})` });
        }
      }
      if (this.mode === 'watch') {
        this.notice({ level: 'info', message: `following ${this.root} with file-system events (and a full rescan every ${this.opts.safetyScanMs / 1000} s)` });
        this.startPolling(this.opts.safetyScanMs);
      } else {
        this.mode = 'poll';
        const why = this.opts.poll ? 'as requested' : remote ? `${remote} delivers no file events` : 'no file events';
        this.notice({ level: 'info', message: `following ${this.root} by polling every ${this.opts.pollMs / 1000} s (${why})` });
        this.startPolling(this.opts.pollMs);
      }
      const idle = setInterval(() => this.enqueue(async (ch) => this.completeIdle(ch)), Math.max(50, Math.min(500, this.opts.idleMs / 4)));
      this.timers.push(idle);
    }
    let aborted: Error | undefined;
    await this.enqueue(async (ch) => {
      try {
        await this.scan(ch, true);
      } catch (err) {
        if ((err as Error).name === 'AbortError') return void (aborted = err as Error);
        throw err;
      }
      if (!this.opts.follow) {
        for (const e of this.entries.values()) if (!e.complete) this.complete(e, ch);
      }
      this.initialDone = true;
      this.warnSizes([...this.entries.values()].filter((e) => e.complete));
      this.tick(0, true);
      this.progress = undefined;
    });
    if (aborted) throw aborted;
  }

  private watchDir(dir: string): void {
    if (this.dirWatchers.has(dir) || this.mode === 'poll') return;
    const w = watch(dir, {}, (_ev, name) => this.onEvent(name ? join(dir, name.toString()) : undefined));
    w.on('error', (err) => {
      if (dir === this.root) this.watchFailed(err);
      else {
        w.close();
        this.dirWatchers.delete(dir);
      }
    });
    this.dirWatchers.set(dir, w);
  }

  private syncDirWatchers(dirs: Set<string>): void {
    if (this.mode !== 'watch' || !this.isDir) return;
    for (const [d, w] of this.dirWatchers) {
      if (!dirs.has(d) && d !== this.root) {
        w.close();
        this.dirWatchers.delete(d);
      }
    }
    for (const d of dirs) {
      try {
        this.watchDir(d);
      } catch {
        /* the folder went away or the watch limit is reached: the periodic rescan still covers it */
      }
    }
  }

  private watchFailed(err: Error): void {
    if (this.mode === 'poll' || this.closed) return;
    this.notice({ level: 'warning', message: `${this.root}: file events failed (${err.message}); falling back to polling every ${this.opts.pollMs / 1000} s` });
    this.watcher?.close();
    this.watcher = undefined;
    for (const w of this.dirWatchers.values()) w.close();
    this.dirWatchers.clear();
    this.mode = 'poll';
    this.startPolling(this.opts.pollMs);
  }

  private startPolling(ms: number): void {
    const t = setInterval(() => {
      this.dirtyAll = true;
      this.schedule(0);
    }, ms);
    this.timers.push(t);
  }

  private onEvent(file: string | undefined): void {
    if (this.closed) return;
    if (file === undefined) this.dirtyAll = true;
    else this.dirtyFiles.add(file);
    this.schedule(30);
  }

  private schedule(ms: number): void {
    if (this.debounce || this.closed) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      const all = this.dirtyAll;
      const files = [...this.dirtyFiles];
      this.dirtyAll = false;
      this.dirtyFiles.clear();
      void this.enqueue(async (ch) => {
        if (all) await this.scan(ch, false);
        else for (const f of files) await this.checkPath(f, ch);
      });
    }, ms);
  }

  /** Runs one update at a time; emits its changes. */
  private enqueue(fn: (ch: Change) => Promise<void>): Promise<void> {
    const run = async () => {
      if (this.closed) return;
      const ch = new Change();
      try {
        await fn(ch);
      } catch (err) {
        this.notice({ level: 'error', message: `${this.root}: ${(err as Error).message}` });
      }
      if (!ch.empty && !this.closed) this.emit(ch);
    };
    this.chain = this.chain.then(run, run);
    return this.chain;
  }

  private emit(ch: Change): void {
    const present = (k: GroupKey) => this.entries.has(k);
    const e: RunChange = {
      removed: [...ch.removed],
      added: [...ch.added].filter(present),
      completed: [...ch.completed].filter((k) => this.entries.get(k)?.complete),
      changed: [...ch.changed].filter((k) => present(k) && !ch.added.has(k)),
    };
    if (!e.removed.length && !e.added.length && !e.completed.length && !e.changed.length) return;
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.notice({ level: 'error', message: `change listener failed: ${(err as Error).message}` });
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
      this.syncDirWatchers(dirs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') list = [];
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
          return readWhole(p).catch(() => undefined);
        }),
      );
      for (let j = 0; j < slice.length; j++) {
        this.checkAbort();
        try {
          await this.checkFile(slice[j], stats.get(slice[j]), ch, pre[j]);
        } catch (err) {
          if ((err as Error).name === 'AbortError') throw err;
          // one unreadable file (EIO, ESTALE) never stops the others: name it, skip it, keep going
          this.fileFailed(slice[j], err as Error);
        }
        if (this.progress) this.progress.filesRead++;
      }
    }
    if (this.notLogs.size > this.notLogsReported) {
      const n = notLogSummary(this.root, [...this.notLogs]);
      this.notLogsReported = this.notLogs.size;
      if (n) this.notice(n);
    }
  }

  private fileFailed(path: string, err: Error): void {
    const fs = this.files.get(path);
    const code = (err as NodeJS.ErrnoException).code ?? err.message;
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
    if (st.isFile()) await this.checkFile(path, st, ch);
  }

  private dropFile(path: string, ch: Change, why: 'deleted' | 'replaced' | 'truncated' | 'rewritten'): void {
    const fs = this.files.get(path);
    if (!fs) return;
    forgetFile(path);
    this.files.delete(path);
    let dropped = 0;
    for (const key of fs.keys) {
      const e = this.entries.get(key);
      if (!e) continue;
      if (e.origin === 'group' && e.firstSource.file === path) {
        dropped += e.n;
        this.entries.delete(key);
        this.lastUpdate.delete(key);
        ch.removed.add(key);
        continue;
      }
      if (e.origin !== 'rollouts') continue;
      const kept = e.rollouts.filter((r) => r.source.file !== path);
      if (kept.length === e.rollouts.length) continue;
      dropped += e.rollouts.length - kept.length;
      if (kept.length === 0) {
        this.entries.delete(key);
        this.lastUpdate.delete(key);
        ch.removed.add(key);
      } else {
        e.rollouts = kept;
        e.n = kept.length;
        if (e.firstSource.file === path) e.firstSource = kept[0].source;
        e.revision++;
        ch.changed.add(key);
      }
    }
    if (why === 'deleted' || dropped > 0) {
      const what = why === 'deleted' ? 'deleted' : `${why}; re-reading it from the start`;
      this.notice({ level: why === 'deleted' ? 'warning' : 'info', message: `${path}: file ${what} (${dropped} roll-outs dropped)`, file: path });
    }
  }

  private async checkFile(path: string, st: Stats | undefined, ch: Change, preloaded?: Buffer): Promise<void> {
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
      let why: 'replaced' | 'truncated' | 'rewritten' | undefined;
      if (st.ino !== fs.ino || st.dev !== fs.dev) why = 'replaced';
      else if (st.size < fs.size || st.size < fs.consumed) why = 'truncated';
      else if (st.size === fs.size && st.mtimeMs === fs.mtimeMs && !fs.parquetPending) return; // unchanged
      else if (fs.head.length > 0 && !(await this.sameBytes(path, 0, fs.head))) why = 'rewritten';
      else if (fs.tail && !(await this.sameBytes(path, fs.consumed - fs.tail.length, fs.tail))) why = 'rewritten';
      if (why) {
        this.dropFile(path, ch, why);
        fs = undefined;
      }
    }
    if (!fs) {
      fs = { path, dev: st.dev, ino: st.ino, size: 0, mtimeMs: 0, consumed: 0, nextLine: 1, head: Buffer.alloc(0), unsupported: false, keys: new Set(), maxStep: -1 };
      this.files.set(path, fs);
    }
    if (fs.unsupported) {
      fs.size = st.size;
      fs.mtimeMs = st.mtimeMs;
      return;
    }
    await this.readFile(fs, st, ch, preloaded && preloaded.length === st.size ? preloaded : undefined);
  }

  private async sameBytes(path: string, pos: number, bytes: Buffer): Promise<boolean> {
    try {
      const fh = await open(path, 'r');
      try {
        const b = Buffer.alloc(bytes.length);
        const { bytesRead } = await fh.read(b, 0, b.length, pos);
        return bytesRead === bytes.length && b.equals(bytes);
      } finally {
        await fh.close();
      }
    } catch {
      return false;
    }
  }

  private async readFile(fs: FileState, st: Stats, ch: Change, preloaded?: Buffer): Promise<void> {
    let fh: FileLike;
    try {
      fh = preloaded ? bufferHandle(preloaded, st) : await open(fs.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return void this.dropFile(fs.path, ch, 'deleted');
      this.notice({ level: 'error', message: `${fs.path}: cannot open (${(err as NodeJS.ErrnoException).code}); skipped`, file: fs.path });
      fs.unsupported = true;
      return;
    }
    try {
      const fst = await fh.stat();
      const size = fst.size;
      if (fst.ino !== fs.ino) {
        // replaced between stat and open: start over with the new file
        fs.ino = fst.ino;
        fs.dev = fst.dev;
      }
      if (fs.head.length < HEAD && size > fs.head.length) {
        const b = Buffer.alloc(Math.min(HEAD, size));
        const { bytesRead } = await fh.read(b, 0, b.length, 0);
        fs.head = b.subarray(0, bytesRead);
      }
      if (fs.format === undefined && !fs.parser) {
        const inFolder = this.isDir;
        const quietOk = inFolder && !isJsonlName(fs.path);
        if (inFolder && isNotLogName(fs.path)) {
          fs.unsupported = fs.notLog = true;
          this.notLogs.add(fs.path);
          fs.size = size;
          fs.mtimeMs = fst.mtimeMs;
          return;
        }
        const probe = Buffer.alloc(Math.min(PROBE_BYTES, size));
        const { bytesRead: pr } = await fh.read(probe, 0, probe.length, 0);
        const c = classify(fs.path, probe.subarray(0, pr));
        const kind = c === 'empty' ? 'empty' : typeof c === 'object' ? 'unsupported' : c === 'table' ? 'parquet' : c;
        if (typeof c === 'object' && quietOk) {
          fs.unsupported = fs.notLog = true;
          this.notLogs.add(fs.path);
          fs.size = size;
          fs.mtimeMs = fst.mtimeMs;
          return;
        }
        if (kind === 'empty') {
          if (!this.opts.follow) this.notice({ level: 'warning', message: `${fs.path}: empty file, no records`, file: fs.path });
          fs.size = size;
          fs.mtimeMs = fst.mtimeMs;
          if (fs.head.length === size) fs.head = Buffer.alloc(0); // only whitespace so far: keep re-sniffing
          return;
        }
        if (kind === 'unsupported') {
          this.notice({ level: 'error', message: `${fs.path}: unsupported file (${typeof c === 'object' ? c.skip : UNSUPPORTED_HINT}); skipped`, file: fs.path });
          fs.unsupported = true;
          fs.size = size;
          fs.mtimeMs = fst.mtimeMs;
          return;
        }
        if (kind === 'parquet') fs.format = c === 'table' ? 'wandb' : 'trl';
        else
          fs.parser = new JsonlFileParser(this.folderRoot, fs.path, this.notice, undefined, this.runOnce, quietOk ? () => {
            fs.notLog = true;
            this.notLogs.add(fs.path);
          } : undefined);
      }
      fs.size = size;
      fs.mtimeMs = fst.mtimeMs;
      if (fs.format === 'trl' || fs.format === 'wandb') return void (await this.readParquet(fs, ch));
      const parser = fs.parser!;
      const now = Date.now();
      fs.partial = false;
      // The index runs on the editor's extension host: one line can be megabytes (a group record
      // of 64 long roll-outs), so a long line is read as bytes and scanned without decoding its
      // texts (skeleton.ts), in steps; and the reader yields to the event loop whenever a slice of
      // work has taken SLICE_MS: the window is never blocked for longer. (A short line is decoded
      // and parsed whole: that is cheaper, and a fraction of a millisecond.)
      let slice = performance.now();
      const pause = async (): Promise<void> => {
        if (this.opts.follow && performance.now() - slice > SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          slice = performance.now();
        }
      };
      for await (const lines of readRawLineBatches(fh, fs.consumed, fs.nextLine, size)) {
        if (this.progress) {
          this.checkAbort();
          this.tick(lines[lines.length - 1].end - lines[0].offset);
        }
        for (const raw of lines) {
          await pause();
          const long = raw.bytes.length >= SKELETON_MIN;
          const l = long ? undefined : decodeLine(raw);
          const blank = l ? l.text.trim() === '' : isBlankLine(raw.bytes);
          let sk: Skeleton | null = null;
          if (!l && !blank) {
            const scan = skeletonOf(raw.bytes, lineStart(raw));
            for (let r = scan.next(); ; r = scan.next()) {
              if (r.done) {
                sk = r.value;
                break;
              }
              await pause();
            }
          }
          if (!raw.terminated) {
            // complete once it is a JSON object (a byte-order mark makes it no JSON here: JSON.parse
            // of the text rejects it)
            let complete = blank;
            if (!complete && (l || (sk && lineStart(raw) === 0))) {
              try {
                const v = parseJsonLine(l ? l.text : sk!.text).value;
                complete = typeof v === 'object' && v !== null;
              } catch {
                complete = false;
              }
            }
            if (!complete) {
              if (!this.opts.follow) this.notice({ level: 'warning', message: `${fs.path}:${raw.line}: incomplete last line (no newline yet); not read`, file: fs.path, line: raw.line });
              fs.partial = true;
              continue; // wait for the rest of the line
            }
            if (blank) continue;
          }
          const rec = l ? parser.line(l) : parser.lineBytes(raw, sk);
          fs.consumed = raw.end;
          fs.nextLine = raw.line + 1;
          if (rec) this.addRecord(rec, fs, now, ch);
          if (parser.unsupported) break;
        }
        if (parser.unsupported) break;
      }
      fs.format = parser.format;
      if (parser.unsupported) fs.unsupported = true;
      if (!this.opts.follow) parser.finish();
      else if (fs.consumed > 0) {
        const n = Math.min(HEAD, fs.consumed);
        const b = Buffer.alloc(n);
        const { bytesRead } = await fh.read(b, 0, n, fs.consumed - n);
        fs.tail = bytesRead === n ? b : undefined;
      }
    } finally {
      await fh.close();
    }
  }

  private async readParquet(fs: FileState, ch: Change): Promise<void> {
    // a parquet file is rewritten whole: drop what it gave before and read it again
    if (fs.keys.size) {
      const path = fs.path;
      const keep = { ...fs };
      this.dropFile(path, ch, 'rewritten');
      this.files.set(path, { ...keep, keys: new Set() });
      fs = this.files.get(path)!;
    }
    try {
      const run = runOfFile(this.folderRoot, fs.path);
      const r = /\.table\.json$/i.test(fs.path) ? await readWandbTable(fs.path, run) : await readTrlFile(fs.path, run);
      for (const n of r.notices) if (!this.runOnce.has(`trl:${n.message.slice(n.message.indexOf(': ') + 2)}`)) {
        this.runOnce.add(`trl:${n.message.slice(n.message.indexOf(': ') + 2)}`);
        this.notice(n);
      }
      fs.parquetPending = undefined;
      fs.consumed = fs.size;
      const now = Date.now();
      for (const rec of r.records) this.addRecord(rec, fs, now, ch);
      if (r.rows === 0 && !this.opts.follow) this.notice({ level: 'warning', message: `${fs.path}: ${r.what} with no rows`, file: fs.path });
    } catch (err) {
      const message = `${fs.path}: unsupported or unreadable parquet file (${(err as Error).message}); skipped`;
      if (!this.opts.follow) {
        this.notice({ level: 'error', message, file: fs.path });
        fs.unsupported = true;
        return;
      }
      fs.parquetPending ??= { since: Date.now(), reported: false, message };
      fs.parquetPending.message = message;
    }
  }

  private toEntry(r: Rollout & { extra?: Record<string, unknown> }): RolloutEntry {
    const e: RolloutEntry = {
      meanLogprob: r.meanLogprob ?? null,
      reward: r.reward ?? null,
      answer: r.answer ?? null,
      verification: r.verification ?? null,
      sampleIdx: r.sampleIdx ?? null,
      source: r.source as RolloutSource,
    };
    if (r.extra) e.extra = r.extra;
    return e;
  }

  private addRecord(rec: ParsedRecord, fs: FileState, now: number, ch: Change): void {
    if (this.opts.ignoreTruth) {
      rec.groundTruth = null;
      delete rec.groundTruthForms;
    }
    const key = groupKey(rec.run, rec.step, rec.questionId);
    const existing = this.entries.get(key);
    const at = `${rec.source.file}:${rec.source.line}`;
    const format = fs.format ?? fs.parser?.format ?? 'native';
    if (rec.step > fs.maxStep) {
      if (fs.maxStep >= 0) {
        // the file moved on to a later step: its earlier roll-out groups are done
        for (const k of fs.keys) {
          const e = this.entries.get(k);
          if (e && !e.complete && e.step < rec.step) this.complete(e, ch);
        }
      }
      fs.maxStep = rec.step;
    }
    if (rec.kind === 'rollout' && (format === 'verl' || format === 'nemo-rl')) {
      // one file per step: a later step's file in the same stream means the earlier steps are written
      const stream = `${format}\0${rec.run ?? ''}\0${rec.stream ?? 'train'}`;
      const max = this.streamStep.get(stream) ?? -1;
      if (rec.step > max) {
        this.streamStep.set(stream, rec.step);
        if (max >= 0) {
          for (const k of this.lastUpdate.keys()) {
            const e = this.entries.get(k);
            if (e && !e.complete && e.step < rec.step && streamOf(e) === stream) this.complete(e, ch);
          }
        }
      }
    }
    if (rec.kind === 'group') {
      if (existing && /\.table\.json$/i.test(rec.source.file) && existing.firstSource.file !== rec.source.file) return; // a W&B table re-logged whole: rows of earlier files again
      if (rec.rollouts.length === 0) {
        this.notice({ level: 'warning', message: `${at}: ${describeGroup(rec)} has no roll-outs ("rollouts": []); skipped`, file: rec.source.file, line: rec.source.line });
        return;
      }
      if (existing) {
        const first = `${existing.firstSource.file}:${existing.firstSource.line}`;
        this.notice({ level: 'warning', message: `${at}: duplicate group ${describeGroup(rec)} (first at ${first}); skipped`, file: rec.source.file, line: rec.source.line });
        return;
      }
      const packed = pack(rec.rollouts, rec.source);
      let confident = 0;
      for (const x of packed.ml) if (!Number.isNaN(x)) confident++;
      const e = {
        key,
        step: rec.step,
        questionId: rec.questionId,
        groundTruth: rec.groundTruth ?? null,
        n: rec.rollouts.length,
        origin: 'group',
        format,
        complete: false,
        revision: 0,
        firstSource: rec.source,
      } as GroupEntry;
      Object.defineProperty(e, 'rollouts', { enumerable: true, configurable: true, get: () => unpack(packed) });
      this.packedConfident.set(e, confident);
      if (rec.run !== undefined) e.run = rec.run;
      if (rec.prompt !== undefined) e.prompt = rec.prompt;
      if (rec.outcomeChecks) e.outcomeChecks = rec.outcomeChecks;
      if (rec.loggedOperator) e.loggedOperator = rec.loggedOperator;
      if (rec.groundTruthForms) e.groundTruthForms = rec.groundTruthForms;
      if (rec.stream) e.stream = rec.stream;
      this.entries.set(key, e);
      fs.keys.add(key);
      ch.added.add(key);
      this.complete(e, ch);
      return;
    }
    if (existing?.origin === 'group') {
      const first = `${existing.firstSource.file}:${existing.firstSource.line}`;
      this.notice({ level: 'warning', message: `${at}: roll-out record for ${describeGroup(rec)}, which came as a group record (at ${first}); skipped`, file: rec.source.file, line: rec.source.line });
      return;
    }
    const entry = this.toEntry(rec.rollout);
    fs.keys.add(key);
    this.lastUpdate.set(key, now);
    if (existing && rec.turn) {
      const t = this.turns.get(key)?.get(rec.turn.session);
      if (t) {
        // a later output of the same session replaces the earlier one: only the final output votes
        if (rec.turn.output > t.output) {
          const i = existing.rollouts.findIndex((r) => r.source === t.source);
          if (i >= 0) existing.rollouts[i] = entry;
          t.output = rec.turn.output;
          t.source = entry.source;
          if (existing.complete) {
            existing.revision++;
            ch.changed.add(key);
          }
        }
        return;
      }
    }
    if (rec.turn) {
      let m = this.turns.get(key);
      if (!m) this.turns.set(key, (m = new Map()));
      m.set(rec.turn.session, { output: rec.turn.output, source: entry.source });
    }
    if (existing) {
      insertOrdered(existing.rollouts, entry);
      existing.n = existing.rollouts.length;
      if (existing.prompt === undefined && rec.prompt !== undefined) existing.prompt = rec.prompt;
      if (existing.groundTruth === null && rec.groundTruth != null) existing.groundTruth = rec.groundTruth;
      if (existing.complete) this.reopen(existing);
      else this.maybeCompleteBySize(existing, ch);
      return;
    }
    const e: GroupEntry = {
      key,
      step: rec.step,
      questionId: rec.questionId,
      groundTruth: rec.groundTruth ?? null,
      rollouts: [entry],
      n: 1,
      origin: 'rollouts',
      format,
      complete: false,
      revision: 0,
      firstSource: rec.source,
    };
    if (rec.run !== undefined) e.run = rec.run;
    if (rec.prompt !== undefined) e.prompt = rec.prompt;
    if (rec.groundTruthForms) e.groundTruthForms = rec.groundTruthForms;
    if (rec.stream) e.stream = rec.stream;
    if (rec.loggedOperator) e.loggedOperator = rec.loggedOperator;
    this.entries.set(key, e);
    ch.added.add(key);
    this.maybeCompleteBySize(e, ch);
  }

  private expectedSize(e: GroupEntry): number | undefined {
    const h = this.sizeHist.get(streamOf(e));
    if (!h) return undefined;
    let best: number | undefined;
    let bestN = 0;
    for (const [s, n] of h) if (n > bestN || (n === bestN && best !== undefined && s > best)) [best, bestN] = [s, n];
    return best;
  }

  private maybeCompleteBySize(e: GroupEntry, ch: Change): void {
    if (!this.opts.follow || this.reopened.has(e.key)) return;
    const n = this.expectedSize(e);
    if (n !== undefined && e.n >= n) this.complete(e, ch);
  }

  /**
   * A complete group of roll-out records received more: it is open again (its size left the usual
   * size's histogram) and completes again by the same rules — printed once more, not once per line.
   */
  private reopen(e: GroupEntry): void {
    e.complete = false;
    e.revision++;
    const h = this.sizeHist.get(streamOf(e));
    const was = this.countedSize.get(e.key);
    if (h && was !== undefined) {
      const c = (h.get(was) ?? 1) - 1;
      if (c > 0) h.set(was, c);
      else h.delete(was);
    }
    this.countedSize.delete(e.key);
    this.reopened.add(e.key);
  }

  /** Groups reopened past the usual size: they complete by idleness or when their file moves on, not by size. */
  private readonly reopened = new Set<GroupKey>();

  /** Latest step seen per stream of per-step files (verl, NeMo RL). */
  private readonly streamStep = new Map<string, number>();

  /** Roll-outs with a confidence, per group-record entry (its roll-outs are packed). */
  private readonly packedConfident = new WeakMap<GroupEntry, number>();

  /** The size each complete group was counted with in sizeHist. */
  private readonly countedSize = new Map<GroupKey, number>();

  private complete(e: GroupEntry, ch: Change): void {
    if (e.complete) return;
    e.complete = true;
    this.lastUpdate.delete(e.key);
    const stream = streamOf(e);
    let h = this.sizeHist.get(stream);
    if (!h) this.sizeHist.set(stream, (h = new Map()));
    h.set(e.n, (h.get(e.n) ?? 0) + 1);
    this.countedSize.set(e.key, e.n);
    if (e.origin === 'rollouts' && this.initialDone) this.warnSizes([e]);
    ch.completed.add(e.key);
  }

  private warnSizes(es: GroupEntry[]): void {
    const verl = es.filter((e) => (e.format === 'verl' || e.format === 'nemo-rl') && e.origin === 'rollouts');
    const byStream = new Map<string, GroupEntry[]>();
    for (const e of verl) {
      const k = streamOf(e);
      const list = byStream.get(k);
      if (list) list.push(e);
      else byStream.set(k, [e]);
    }
    for (const list of byStream.values()) {
      const modal = this.initialDone && es.length === 1 ? this.expectedSize(list[0]) : modalSize(list.map((e) => e.n));
      if (modal === undefined) continue;
      for (const e of list) {
        if (e.n === modal) continue;
        if (this.sizeWarnings++ >= 10) continue;
        const s = e.firstSource;
        const why = e.n > modal && e.n % modal === 0 ? ' (the prompt is probably repeated within the step: its copies are merged into one group)' : '';
        this.notice({ level: 'warning', message: `${s.file}:${s.line}: ${describeGroup(e)} has ${e.n} roll-outs; the run's usual group size is ${modal}${why}`, file: s.file, line: s.line });
      }
    }
  }

  private async completeIdle(ch: Change): Promise<void> {
    const now = Date.now();
    // a file that ends mid-line is still being written: its groups wait for the writer
    const writing = new Set<GroupKey>();
    // groups in a file modified within the longer wait: its writer may only be pausing
    const underSizeWait = UNDER_SIZE_IDLE * this.opts.idleMs;
    const recent = new Set<GroupKey>();
    for (const fs of this.files.values()) {
      if (fs.partial) for (const k of fs.keys) writing.add(k);
      if (now - fs.mtimeMs < underSizeWait) for (const k of fs.keys) recent.add(k);
    }
    for (const [key, t] of [...this.lastUpdate]) {
      if (now - t < this.opts.idleMs || writing.has(key)) continue;
      const e = this.entries.get(key);
      // smaller than its stream's usual size in a file written to lately: the writer may be
      // pausing between lines — wait longer (UNDER_SIZE_IDLE × idleMs) unless a later step
      // arrives first. A file left alone that long is finished: a finished run's smaller groups
      // (N varies per question in some runs) complete after the ordinary idle period.
      const usual = e && !this.reopened.has(key) && recent.has(key) ? this.expectedSize(e) : undefined;
      if (e && usual !== undefined && e.n < usual && now - t < underSizeWait) continue;
      if (e) this.complete(e, ch);
      else this.lastUpdate.delete(key);
    }
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

  /** All groups, in the order their first record was read. */
  groups(): GroupEntry[] {
    return [...this.entries.values()];
  }

  group(key: GroupKey): GroupEntry | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Which roll-outs carry a confidence c_i (a mean token log-prob, needed by CISC and CoRE) and,
   * when none do, why: what the run's formats log. The explorer shows it per run.
   */
  confidence(): ConfidenceSummary {
    let rollouts = 0;
    let withConfidence = 0;
    const formats = new Set<LogFormat>();
    for (const e of this.entries.values()) {
      formats.add(e.format);
      rollouts += e.n;
      if (e.origin === 'group') withConfidence += this.packedConfident.get(e) ?? 0;
      else for (const r of e.rollouts) if (r.meanLogprob !== null) withConfidence++;
    }
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
    const e = this.entries.get(key);
    if (!e) throw new Error(`no group ${key} in ${this.root}`);
    const rollouts = e.rollouts;
    const texts: string[] = [];
    for (const r of rollouts) texts.push(await readText(r.source)); // in order: a group record's line is parsed once
    return entryToGroup(e, texts, rollouts);
  }

  readRolloutText(source: RolloutSource): Promise<string> {
    return readText(source);
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    for (const w of this.dirWatchers.values()) w.close();
    this.dirWatchers.clear();
    for (const t of this.timers) clearInterval(t);
    if (this.debounce) clearTimeout(this.debounce);
    this.timers = [];
  }
}

const PRELOAD_MAX = 256 * 1024;

/** Lines at least this long are scanned as bytes, their texts left out (skeleton.ts). */
const SKELETON_MIN = 64 * 1024;

/** Longest stretch of parsing between two yields to the event loop while following (ms). */
const SLICE_MS = 8;

/** A group below its stream's usual size completes by idleness only after this many idle periods. */
const UNDER_SIZE_IDLE = 10;

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
};

/** Groups of one stream share a usual size: same format, same run folder (verl's validation dumps differ from its roll-out dumps). */
function streamOf(e: GroupEntry): string {
  return `${e.format}\0${e.run ?? ''}\0${e.stream ?? 'train'}`;
}

/**
 * A group record's roll-outs in columns: ~20 bytes per roll-out instead of two objects (a 1 GB log
 * holds half a million roll-outs). NaN stands for a missing number.
 */
interface Packed {
  base: RecordSource;
  ml: Float64Array;
  rw: Float64Array;
  si: Float64Array | null;
  answers: (string | null)[] | null;
  ver: (Verification | null)[] | null;
  extra: (Record<string, unknown> | undefined)[] | null;
  /** Per-roll-out sources when they are not items of one line (TRL parquet rows). */
  sources: RolloutSource[] | null;
}

function pack(rs: Array<Rollout & { extra?: Record<string, unknown> }>, base: RecordSource): Packed {
  const n = rs.length;
  const p: Packed = { base, ml: new Float64Array(n), rw: new Float64Array(n), si: null, answers: null, ver: null, extra: null, sources: null };
  for (let i = 0; i < n; i++) {
    const r = rs[i];
    p.ml[i] = typeof r.meanLogprob === 'number' ? r.meanLogprob : NaN;
    p.rw[i] = typeof r.reward === 'number' ? r.reward : NaN;
    if (typeof r.sampleIdx === 'number') (p.si ??= new Float64Array(n).fill(NaN))[i] = r.sampleIdx;
    if (r.answer !== undefined && r.answer !== null) (p.answers ??= new Array(n).fill(null))[i] = r.answer;
    if (r.verification) (p.ver ??= new Array(n).fill(null))[i] = r.verification;
    if (r.extra) (p.extra ??= new Array(n).fill(undefined))[i] = r.extra;
    const src = r.source as RolloutSource | undefined;
    if (src && (src.line !== base.line || src.offset !== base.offset || src.file !== base.file || src.item !== undefined)) (p.sources ??= rs.map((x) => x.source as RolloutSource))[i] = src;
  }
  return p;
}

function unpack(p: Packed): RolloutEntry[] {
  // Built on each read, never cached: a loop over every group's `rollouts` (counting, say) must not
  // pin half a million entries at once. Use `n` for counts; read `rollouts` once per group.
  return build(p);
}

function build(p: Packed): RolloutEntry[] {
  const n = p.ml.length;
  const out: RolloutEntry[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const ml = p.ml[i];
    const rw = p.rw[i];
    const si = p.si ? p.si[i] : NaN;
    const e: RolloutEntry = {
      meanLogprob: Number.isNaN(ml) ? null : ml,
      reward: Number.isNaN(rw) ? null : rw,
      answer: p.answers ? p.answers[i] : null,
      verification: p.ver ? p.ver[i] : null,
      sampleIdx: Number.isNaN(si) ? null : si,
      source: p.sources ? p.sources[i] : { ...p.base, item: i },
    };
    const x = p.extra?.[i];
    if (x) e.extra = x;
    out[i] = e;
  }
  return out;
}

/** The part of a FileHandle that the reader uses. */
interface FileLike {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

async function readWhole(path: string): Promise<Buffer> {
  return readFileFs(path);
}

/** A FileHandle look-alike over a file's content read ahead (with the stat it was read at). */
function bufferHandle(content: Buffer, st: Stats): FileLike {
  return {
    async read(buffer, offset, length, position) {
      const n = Math.max(0, Math.min(length, content.length - position));
      content.copy(buffer, offset, position, position + n);
      return { bytesRead: n };
    },
    async stat() {
      return { ...st, size: content.length, ino: st.ino, dev: st.dev, mtimeMs: st.mtimeMs } as Stats;
    },
    async close() {},
  };
}

/** Inserts a roll-out in sample_idx order (entries without sample_idx go last, in arrival order). */
function insertOrdered(rs: RolloutEntry[], r: RolloutEntry): void {
  if (r.sampleIdx === null) return void rs.push(r);
  let i = rs.length;
  while (i > 0 && (rs[i - 1].sampleIdx === null || (rs[i - 1].sampleIdx as number) > r.sampleIdx)) i--;
  rs.splice(i, 0, r);
}

/** Builds the engine's Group from an index entry and its roll-out texts. */
export function entryToGroup(e: GroupEntry, texts: string[], rollouts: RolloutEntry[] = e.rollouts): Group {
  const g: Group = {
    step: e.step,
    questionId: e.questionId,
    rollouts: rollouts.map((r, i) => {
      const ro: Rollout = { response: texts[i], meanLogprob: r.meanLogprob, reward: r.reward, source: r.source };
      if (r.answer !== null) ro.answer = r.answer;
      if (r.verification) ro.verification = r.verification;
      if (r.sampleIdx !== null) ro.sampleIdx = r.sampleIdx;
      return ro;
    }),
  };
  if (e.run !== undefined) g.run = e.run;
  if (e.prompt !== undefined) g.prompt = e.prompt;
  if (e.groundTruth !== null) g.groundTruth = e.groundTruth;
  if (e.groundTruthForms) g.groundTruthForms = e.groundTruthForms;
  if (e.stream) g.stream = e.stream;
  if (e.outcomeChecks) g.outcomeChecks = e.outcomeChecks;
  if (e.loggedOperator) g.loggedOperator = e.loggedOperator;
  return g;
}

export { orderRollouts };
