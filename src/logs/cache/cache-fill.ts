// The last stage of a run's read through its persisted cache (ARCHITECTURE.md, "The CLI's read
// path"): each group handed back once its work is done, in the run's order, goes to the cache
// with its features; at the end of the run the cache is written — when every group was prepared,
// no read error was reported and no file changed while it was read. The cache's format:
// run-cache.ts.
import { errnoCode, errorMessage } from '../../util/errors';
import type { Group, PreparedGroup } from '../../engine';
import { entryOfGroup, type ReadRunOptions } from '../read-run.js';
import type { Notice, NoticeSink } from '../log-types.js';
import { CacheWriter, type Footer } from './run-cache.js';
import type { RunFiles } from './cache-check.js';
import { fileIdentity, sameIdentity } from './identity.js';

/** A group on its way through the CLI: `prepared` when its features are known (cached), `fillCache` while the cache is written. */
export type CachedGroup = Group & { prepared?: PreparedGroup; fillCache?: boolean };

export class CacheFill {
  private writer: CacheWriter | undefined;
  private readonly notices: Notice[] = [];
  private errors = 0;
  /** The lines read and skipped before this read's own (an extension's base: the footer adds them). */
  private counted = { lines: 0, skipped: 0 };

  /** `base`: the cache an extension appends to. A writer that cannot be opened is an info notice, and the run is read without it. */
  constructor(
    private readonly file: string,
    key: string,
    path: string,
    private readonly listed: RunFiles | undefined,
    private readonly read: ReadRunOptions,
    private readonly onNotice: NoticeSink,
    base?: Footer,
  ) {
    try {
      this.writer = listed ? new CacheWriter(file, key, path, base) : undefined;
    } catch (err) {
      onNotice({ level: 'info', message: `${file}: cannot write the cache (${errnoCode(err) ?? errorMessage(err)}); reading without it`, file });
    }
  }

  /** Whether the groups read are to be kept (their features computed with everything a later command may need). */
  get filling(): boolean {
    return this.writer !== undefined;
  }

  /** The read's notices: kept for the footer (a hit replays them), counted (an error abandons the cache), passed on. */
  readonly sink: NoticeSink = (n) => {
    this.notices.push(n);
    if (n.level === 'error') this.errors++;
    this.onNotice(n);
  };

  /** The read's options: each file's end of read goes to the cache (an extension reads on from there). */
  get reading(): ReadRunOptions {
    return { ...this.read, onFileRead: (s) => this.writer?.fileRead(s) };
  }

  /** An extension: from here on the read's lines are its own. */
  startCounting(): void {
    this.counted = { lines: this.read.stats?.lines ?? 0, skipped: this.read.stats?.skipped ?? 0 };
  }

  /** A group whose work is done (in the run's order): its entry and features go to the cache. */
  done(g: CachedGroup): void {
    if (!this.writer || !g.fillCache) return;
    const e = entryOfGroup(g);
    this.writer.add(e!, e ? g.prepared : undefined);
  }

  /** The run was read to its end: the cache is written when it holds the run; its footer, or undefined. */
  finish(): Footer | undefined {
    if (!this.writer || !this.listed) return undefined;
    const w = this.writer;
    this.writer = undefined;
    const before = this.listed.identities;
    // a group not read or not scored: the cache would not hold the run
    if (this.errors > 0) w.abandon();
    // a file that changed while it was read: its cache would not describe what was read
    const after = before.map((f) => {
      try {
        return fileIdentity(f.path);
      } catch {
        return undefined;
      }
    });
    if (after.some((a, i) => !a || !sameIdentity(a, before[i]))) w.abandon();
    try {
      // the lines read and skipped are kept: a hit reports them (and exits 3) as this read does
      const stats = this.read.stats;
      return w.commit(before, this.notices, { lines: (stats?.lines ?? 0) - this.counted.lines, skipped: (stats?.skipped ?? 0) - this.counted.skipped });
    } catch (err) {
      this.onNotice({ level: 'info', message: `${this.file}: cannot write the cache (${errorMessage(err)})`, file: this.file });
      return undefined;
    }
  }
}
