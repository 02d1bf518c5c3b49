// File watching for a followed run: which files to look at again, and when.
//
// Modes. `watch`: fs.watch events on every folder of the run (one non-recursive watcher per folder:
// Node 20's recursive mode on Linux loses events after a file is renamed over) or on the parent
// folder of a single-file run, debounced into a check of the named files, plus a full rescan every
// `safetyScanMs` as a safety net — an interval that doubles after each rescan with no file event
// since the last one, up to SAFETY_BACKOFF times, and is back to `safetyScanMs` at the next event: a
// finished run left open wakes the host a few times an hour, not every few seconds. `poll`: a full rescan every `pollMs`; chosen with `poll: true`,
// when fs.watch is unavailable, or when the run lives on a network or cluster file system that
// delivers no events (NFS, Lustre, GPFS, BeeGFS, CephFS, CIFS/SMB, FUSE such as sshfs, 9p) —
// detected with statfs. An info notice says which mode, and why polling.
import { watch, type FSWatcher } from 'node:fs';
import { errorMessage } from '../../util/errors';
import { statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Notice } from '../log-types.js';

/** The safety rescan's interval grows to at most this many times `safetyScanMs` while no event comes. */
const SAFETY_BACKOFF = 32;

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

export interface WatchOptions {
  root: string;
  isDir: boolean;
  folderRoot: string;
  poll: boolean;
  pollMs: number;
  safetyScanMs: number;
  notice: (n: Notice) => void;
  /** Something changed: `all` (rescan everything) or these files. Debounced. */
  onDirty: (all: boolean, files: string[]) => void;
}

export class RunWatcher {
  mode: 'watch' | 'poll' = 'poll';
  private watcher?: FSWatcher;
  private readonly dirWatchers = new Map<string, FSWatcher>();
  private timers: NodeJS.Timeout[] = [];
  private debounce?: NodeJS.Timeout;
  private readonly dirtyFiles = new Set<string>();
  private dirtyAll = false;
  private closed = false;
  /** Events failed or were never available. */
  private polling = false;
  /** watch mode: the safety rescan's timer, its interval now, and whether an event came since the last rescan. */
  private safety?: NodeJS.Timeout;
  private safetyMs = 0;
  private eventSince = false;

  constructor(private readonly o: WatchOptions) {}

  async start(): Promise<void> {
    const o = this.o;
    let remote: string | undefined;
    try {
      remote = REMOTE_FS[Number((await statfs(o.folderRoot)).type) >>> 0];
    } catch {
      /* statfs unsupported: assume local */
    }
    let watching = false;
    if (!o.poll && !remote) {
      try {
        if (o.isDir) this.watchDir(o.root);
        else {
          this.watcher = watch(o.folderRoot, {}, (_ev, name) => {
            if (!name || name.toString() === basename(o.root)) this.onEvent(o.root);
          });
          this.watcher.on('error', (err) => this.failed(err));
        }
        watching = true;
      } catch (err) {
        o.notice({ level: 'info', message: `${o.root}: file events unavailable (${errorMessage(err)})` });
      }
    }
    if (watching) {
      this.mode = 'watch';
      o.notice({ level: 'info', message: `following ${o.root} with file-system events (and a full rescan after ${o.safetyScanMs / 1000} s, less often while nothing changes)` });
      this.safetyMs = o.safetyScanMs;
      this.armSafety();
    } else {
      this.mode = 'poll';
      this.polling = true;
      const why = o.poll ? 'as requested' : remote ? `${remote} delivers no file events` : 'no file events';
      o.notice({ level: 'info', message: `following ${o.root} by polling every ${o.pollMs / 1000} s (${why})` });
      this.startPolling(o.pollMs);
    }
  }

  /** Runs `fn` every `ms` until closed. */
  every(ms: number, fn: () => void): void {
    this.timers.push(setInterval(fn, ms));
  }

  /** The next safety rescan (watch mode), after the current interval; a quiet one doubles it. */
  private armSafety(): void {
    if (this.closed || this.polling) return;
    this.safety = setTimeout(() => {
      this.safety = undefined;
      if (!this.eventSince) this.safetyMs = Math.min(this.safetyMs * 2, this.o.safetyScanMs * SAFETY_BACKOFF);
      this.eventSince = false;
      this.dirtyAll = true;
      this.schedule(0);
      this.armSafety();
    }, this.safetyMs);
  }

  private watchDir(dir: string): void {
    if (this.dirWatchers.has(dir) || this.polling) return;
    const w = watch(dir, {}, (_ev, name) => this.onEvent(name ? join(dir, name.toString()) : undefined));
    w.on('error', (err) => {
      if (dir === this.o.root) this.failed(err);
      else {
        w.close();
        this.dirWatchers.delete(dir);
      }
    });
    this.dirWatchers.set(dir, w);
  }

  /** The run's folders as of the last scan: one watcher each. */
  syncDirs(dirs: Set<string>): void {
    if (this.mode !== 'watch' || !this.o.isDir) return;
    for (const [d, w] of this.dirWatchers) {
      if (!dirs.has(d) && d !== this.o.root) {
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

  private failed(err: Error): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    this.o.notice({ level: 'warning', message: `${this.o.root}: file events failed (${err.message}); falling back to polling every ${this.o.pollMs / 1000} s` });
    this.closeWatchers();
    if (this.safety) clearTimeout(this.safety);
    this.mode = 'poll';
    this.startPolling(this.o.pollMs);
  }

  private startPolling(ms: number): void {
    this.every(ms, () => {
      this.dirtyAll = true;
      this.schedule(0);
    });
  }

  private onEvent(file: string | undefined): void {
    if (this.closed) return;
    this.eventSince = true;
    if (this.safetyMs > this.o.safetyScanMs && this.safety) {
      // activity again: back to the short safety interval
      clearTimeout(this.safety);
      this.safetyMs = this.o.safetyScanMs;
      this.armSafety();
    }
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
      this.o.onDirty(all, files);
    }, ms);
  }

  private closeWatchers(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const w of this.dirWatchers.values()) w.close();
    this.dirWatchers.clear();
  }

  close(): void {
    this.closed = true;
    this.closeWatchers();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.safety) clearTimeout(this.safety);
    if (this.debounce) clearTimeout(this.debounce);
  }
}
