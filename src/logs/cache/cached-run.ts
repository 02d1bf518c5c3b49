// A run read through its persisted cache, as one object: `openRunCache` composes the stages
// (ARCHITECTURE.md, "The CLI's read path") — the run's files (stage 1) and the cache check
// (stage 2, cache-check.ts), then either the cached groups (texts empty, `prepared` attached:
// nothing is read from the log files but their identities) or the groups read from the files
// (stages 3 and 4, src/logs/read-run.ts), each handed back once its work is done to be written
// to the cache (cache-fill.ts). `preparedOf` is how the per-group work of report, sweep and health
// gets a group's features: the cached ones, or computed (and, while the cache is being written,
// computed with everything a later command may need and kept on the group).
// The cache's rules and format: run-cache.ts.
import { checkGroupSize, prepareGroup, type PrepareOptions, type PreparedGroup } from '../../engine';
import { readAppended, readRun, type ReadRunOptions } from '../read-run.js';
import type { NoticeSink } from '../log-types.js';
import { replayCache, type Footer } from './run-cache.js';
import { checkRunCache, listRun } from './cache-check.js';
import { CacheFill, type CachedGroup } from './cache-fill.js';

export { cacheDir, cacheKey, checkCache, readCachedGroup, replayCache, RecordReader, CACHE_FORMAT, type Footer } from './run-cache.js';
export { decodeFeatures, type RecordFeatures } from './record.js';
export { fileIdentity, type FileIdentity } from './identity.js';
export type { CachedGroup } from './cache-fill.js';

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

/**
 * Opens PATH through its cache. Notices go to `onNotice` as a fresh read would give them (from the
 * cache they are replayed). Never for stdin ('-'): a stream has no identity.
 */
export async function openRunCache(path: string, onNotice: NoticeSink, read: ReadRunOptions, opts: RunCacheOptions = {}): Promise<CachedRun> {
  const listed = await listRun(path);
  const plan = await checkRunCache(path, listed, read.groundTruth ?? 'auto', opts.dir);
  const { file } = plan;
  /** The first read's lines and skipped lines: a cached run exits as that read did (3 on skipped lines). */
  const replayStats = (footer: Footer) => {
    if (!read.stats) return;
    read.stats.lines += footer.stats.lines;
    read.stats.skipped += footer.stats.skipped;
  };
  if (plan.state === 'hit') {
    const footer = plan.footer;
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
  if (plan.state === 'miss' && plan.why) onNotice({ level: 'info', message: `${file}: cache not used (${plan.why}); the run is read again and the cache rebuilt`, file });
  const extend = plan.state === 'extend' ? plan : undefined;
  const fill = new CacheFill(file, plan.key, path, listed, read, onNotice, extend?.base);
  const fresh = async function* (): AsyncGenerator<CachedGroup> {
    const reading = fill.reading;
    const source = extend ? readAppended(path, extend.last, extend.from, fill.sink, reading) : readRun(path, fill.sink, listed ? { ...reading, listed } : reading);
    const filling = fill.filling;
    for await (const g of source) {
      if (filling) (g as CachedGroup).fillCache = true;
      yield g as CachedGroup;
    }
  };
  /** An extension: the first read's notices and statistics, as a read of the whole run gives them first. */
  const replayBase = () => {
    if (!extend) return;
    for (const n of extend.base.notices) onNotice(n);
    replayStats(extend.base);
    fill.startCounting();
  };
  return {
    state: extend ? 'extend' : 'miss',
    file,
    groups: (async function* () {
      replayBase();
      if (extend) yield* replayCache(file, extend.base);
      yield* fresh();
    })(),
    fresh: (async function* () {
      replayBase();
      yield* fresh();
    })(),
    done: (g) => fill.done(g),
    finish: () => fill.finish(),
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
    delete out.novelty;
  }
  if (!opts.health) delete out.text;
  return out;
}
