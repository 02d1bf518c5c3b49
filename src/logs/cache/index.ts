// The persisted run cache as a reader: `openRunCache` gives a run's groups either from its cache
// (texts empty, `prepared` attached: nothing is read from the log files but their identities) or
// from the files (readRun) while the cache is written. `preparedOf` is how the per-group work of
// report, sweep and health gets a group's features: the cached ones, or computed (and, while the
// cache is being written, computed with everything a later command may need and kept on the group).
// The cache's rules and format: run-cache.ts.
import { join } from 'node:path';
import { errnoCode, errorMessage } from '../../util/errors';
import { checkGroupSize, prepareGroup, type PrepareOptions, type PreparedGroup } from '../../engine';
import type { Group } from '../../engine';
import { appendedKeys, entryOfGroup, readAppended, readRun, type FileReadState, type ReadRunOptions } from '../read-run.js';
import { listRunFiles } from '../walk.js';
import type { LogFormat, Notice, NoticeSink } from '../types.js';
import { CacheWriter, cacheDir, cacheKey, checkCache, replayCache, type Footer } from './run-cache.js';
import { fileIdentity, grewFrom, sameIdentity, type FileIdentity } from './identity.js';

export { cacheDir, cacheKey, checkCache, readCachedGroup, replayCache, RecordReader, CACHE_FORMAT, type Footer } from './run-cache.js';
export { decodeFeatures, type RecordFeatures } from './record.js';
export { fileIdentity, type FileIdentity } from './identity.js';

/** A group on its way through the CLI: `prepared` when its features are known (cached), `fillCache` while the cache is written. */
export type CachedGroup = Group & { prepared?: PreparedGroup; fillCache?: boolean };

export interface RunCacheOptions {
  /** The cache folder (default `cacheDir()`). */
  dir?: string;
}

export interface CachedRun {
  /**
   * 'hit': every group from the cache; 'miss': read from the files, the cache being written;
   * 'extend': the cached groups, then those of the lines appended to the run's last file (read from
   * where the cache stopped), which are added to the cache.
   */
  state: 'hit' | 'miss' | 'extend';
  groups: AsyncGenerator<CachedGroup>;
  /** A miss's or an extension's groups read from the files only (the cached ones not replayed): what building the cache needs. */
  fresh?: AsyncGenerator<CachedGroup>;
  /** Hands a group back once its work is done (in the run's order): its features go to the cache. */
  done(g: CachedGroup): void;
  /** The run was read to its end: the cache is written (when every group was prepared, no read error, no file changed meanwhile); its footer, or undefined. */
  finish(): Footer | undefined;
  /** The cache file. */
  file: string;
  /** A hit's footer (the groups, roll-outs and files it describes). */
  footer?: Footer;
}

async function identities(path: string): Promise<{ list: FileIdentity[]; notices: Notice[] } | undefined> {
  const notices: Notice[] = [];
  try {
    const files = await listRunFiles(path, (n) => notices.push(n));
    return { list: files.map((f) => fileIdentity(f)), notices };
  } catch {
    return undefined;
  }
}

/**
 * Opens PATH through its cache. Notices go to `onNotice` as a fresh read would give them (from the
 * cache they are replayed). Never for stdin ('-'): a stream has no identity.
 */
export async function openRunCache(path: string, onNotice: NoticeSink, read: ReadRunOptions, opts: RunCacheOptions = {}): Promise<CachedRun> {
  const key = cacheKey(path, { groundTruth: read.groundTruth ?? 'auto' });
  const file = join(opts.dir ?? cacheDir(), `${key}.clc`);
  const before = await identities(path);
  /** The first read's lines and skipped lines: a cached run exits as that read did (3 on skipped lines). */
  const replayStats = (footer: Footer) => {
    if (!read.stats) return;
    read.stats.lines += footer.stats.lines;
    read.stats.skipped += footer.stats.skipped;
  };
  let extend: { base: Footer; last: string; from: FileReadState & { format: LogFormat } } | undefined;
  if (before) {
    const c = checkCache(file, key, before.list);
    if (c.ok) {
      const footer = c.footer;
      replayStats(footer);
      return {
        state: 'hit',
        file,
        footer,
        groups: (async function* () {
          for (const n of footer.notices) onNotice(n);
          yield* replayCache(file, footer);
        })(),
        done: () => undefined,
        finish: () => undefined,
      };
    }
    if (c.why === 'stale' && c.footer) extend = await appendPlan(path, c.footer, before.list);
    else if (c.why !== 'none') onNotice({ level: 'info', message: `${file}: cache not used (${c.why}); the run is read again and the cache rebuilt`, file });
  }
  let writer: CacheWriter | undefined;
  try {
    writer = before ? new CacheWriter(file, key, path, extend?.base) : undefined;
  } catch (err) {
    onNotice({ level: 'info', message: `${file}: cannot write the cache (${errnoCode(err) ?? errorMessage(err)}); reading without it`, file });
  }
  const notices: Notice[] = [];
  let errors = 0;
  const sink: NoticeSink = (n) => {
    notices.push(n);
    if (n.level === 'error') errors++;
    onNotice(n);
  };
  const reading: ReadRunOptions = { ...read, onFileRead: (s) => writer?.fileRead(s) };
  // An extension's own lines and skipped lines (the footer adds the first read's).
  let counted = { lines: 0, skipped: 0 };
  const fresh = async function* (): AsyncGenerator<CachedGroup> {
    const source = extend ? readAppended(path, extend.last, extend.from, sink, reading) : readRun(path, sink, reading);
    for await (const g of source) {
      if (writer) (g as CachedGroup).fillCache = true;
      yield g as CachedGroup;
    }
  };
  /** An extension: the first read's notices and statistics, as a read of the whole run gives them first. */
  const replayBase = (base: Footer) => {
    for (const n of base.notices) onNotice(n);
    replayStats(base);
    counted = { lines: read.stats?.lines ?? 0, skipped: read.stats?.skipped ?? 0 };
  };
  return {
    state: extend ? 'extend' : 'miss',
    file,
    groups: (async function* () {
      if (extend) {
        replayBase(extend.base);
        yield* replayCache(file, extend.base);
      }
      yield* fresh();
    })(),
    fresh: (async function* () {
      if (extend) replayBase(extend.base);
      yield* fresh();
    })(),
    done(g) {
      if (!writer || !g.fillCache) return;
      const e = entryOfGroup(g);
      writer.add(e!, e ? g.prepared : undefined);
    },
    finish() {
      if (!writer || !before) return undefined;
      const w = writer;
      writer = undefined;
      // a group not read or not scored: the cache would not hold the run
      if (errors > 0) w.abandon();
      // a file that changed while it was read: its cache would not describe what was read
      const after = before.list.map((f) => {
        try {
          return fileIdentity(f.path);
        } catch {
          return undefined;
        }
      });
      if (after.some((a, i) => !a || !sameIdentity(a, before.list[i]))) w.abandon();
      try {
        // the lines read and skipped are kept: a hit reports them (and exits 3) as this read does
        return w.commit(before.list, notices, { lines: (read.stats?.lines ?? 0) - counted.lines, skipped: (read.stats?.skipped ?? 0) - counted.skipped });
      } catch (err) {
        onNotice({ level: 'info', message: `${file}: cannot write the cache (${errorMessage(err)})`, file });
        return undefined;
      }
    },
  };
}

/**
 * Can the cache `base` be extended to the run's files `now`? Only when every file is as it was
 * but the last, which grew from the size it had (the same device and inode, its first and its
 * last 64 KiB of then unchanged), holds native JSON Lines, and whose new lines are all group
 * records of new groups: then the run's groups are the cached ones followed by those of the new
 * lines, as a fresh read gives them. Anything else (a roll-out record, which may belong to a
 * cached group; a group already cached, which a fresh read reports as a duplicate) is a full read.
 */
async function appendPlan(path: string, base: Footer, now: FileIdentity[]): Promise<{ base: Footer; last: string; from: FileReadState & { format: LogFormat } } | undefined> {
  const last = now.length - 1;
  if (last < 0 || base.files.length !== now.length) return undefined;
  for (let i = 0; i < last; i++) if (!sameIdentity(base.files[i], now[i])) return undefined;
  const was = base.files[last];
  const is = now[last];
  const from = base.reads[last];
  if (was.path !== is.path || was.dev !== is.dev || was.ino !== is.ino || is.size <= was.size || !from || from.format !== 'native' || from.consumed > was.size) return undefined;
  if (!grewFrom(was)) return undefined;
  const at = { ...from, format: from.format };
  let keys: string[] | undefined;
  try {
    keys = await appendedKeys(path, was.path, at);
  } catch {
    return undefined;
  }
  if (!keys) return undefined;
  const known = new Set(base.keys);
  if (keys.some((k) => known.has(k))) return undefined;
  // the first read's warning that the last line was incomplete: that line is read now
  const notices = base.notices.filter((n) => !(n.file === was.path && n.line !== undefined && n.line >= from.nextLine && /incomplete last line/.test(n.message)));
  return { base: { ...base, notices }, last: was.path, from: at };
}

/**
 * A group's features for options `opts`: exactly what `prepareGroup(group, opts)` gives. From the
 * cache when the group has them (computed with reasoning and health measures: the fields `opts`
 * does not ask for are left out); computed otherwise — with everything, kept on the group, while
 * the cache is being written.
 */
export function preparedOf(group: CachedGroup, opts: PrepareOptions = {}): PreparedGroup {
  let full = group.prepared;
  if (!full && group.fillCache) group.prepared = full = prepareGroup(group, { ...opts, reasoning: true, health: true });
  if (!full) return prepareGroup(group, opts);
  checkGroupSize(group, opts.maxGroupSize);
  const out: PreparedGroup = { ...full };
  if (opts.reasoning === false) {
    out.cosines = [];
    out.hasReasoning = false;
    delete out.novelty;
  }
  if (!opts.health) delete out.text;
  return out;
}
