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
import { entryOfGroup, readRun, type ReadRunOptions } from '../read-run.js';
import { listRunFiles } from '../walk.js';
import type { Notice, NoticeSink } from '../types.js';
import { CacheWriter, cacheDir, cacheKey, checkCache, replayCache } from './run-cache.js';
import { fileIdentity, sameIdentity, type FileIdentity } from './identity.js';

export { cacheDir, cacheKey, checkCache, readCachedGroup, replayCache, CACHE_FORMAT, type Footer } from './run-cache.js';
export { fileIdentity, type FileIdentity } from './identity.js';

/** A group on its way through the CLI: `prepared` when its features are known (cached), `fillCache` while the cache is written. */
export type CachedGroup = Group & { prepared?: PreparedGroup; fillCache?: boolean };

export interface RunCacheOptions {
  /** The cache folder (default `cacheDir()`). */
  dir?: string;
}

export interface CachedRun {
  /** 'hit': every group from the cache; 'miss': read from the files, the cache being written. */
  state: 'hit' | 'miss';
  groups: AsyncGenerator<CachedGroup>;
  /** Hands a group back once its work is done (in the run's order): its features go to the cache. */
  done(g: CachedGroup): void;
  /** The run was read to its end: the cache is written (when every group was prepared, no read error, no file changed meanwhile). */
  finish(): void;
  /** The cache file. */
  file: string;
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
  if (before) {
    const c = checkCache(file, key, before.list);
    if (c.ok) {
      const footer = c.footer;
      return {
        state: 'hit',
        file,
        groups: (async function* () {
          for (const n of footer.notices) onNotice(n);
          yield* replayCache(file, footer);
        })(),
        done: () => undefined,
        finish: () => undefined,
      };
    }
    if (c.why !== 'none' && c.why !== 'stale') onNotice({ level: 'info', message: `${file}: cache not used (${c.why}); the run is read again and the cache rebuilt`, file });
  }
  let writer: CacheWriter | undefined;
  try {
    writer = before ? new CacheWriter(file, key, path) : undefined;
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
  return {
    state: 'miss',
    file,
    groups: (async function* () {
      for await (const g of readRun(path, sink, read)) {
        if (writer) (g as CachedGroup).fillCache = true;
        yield g as CachedGroup;
      }
    })(),
    done(g) {
      if (!writer) return;
      const e = entryOfGroup(g);
      writer.add(e!, e ? g.prepared : undefined);
    },
    finish() {
      if (!writer || !before) return;
      const w = writer;
      writer = undefined;
      // a run with skipped lines exits 3: a cache hit, which reads no line, must not hide them
      if (errors > 0 || (read.stats && read.stats.skipped > 0)) w.abandon();
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
        w.commit(before.list, notices);
      } catch (err) {
        onNotice({ level: 'info', message: `${file}: cannot write the cache (${errorMessage(err)})`, file });
      }
    },
  };
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
  }
  if (!opts.health) delete out.text;
  return out;
}
