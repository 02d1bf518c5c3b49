// The CLI's read path (ARCHITECTURE.md, "The CLI's read path") as one composition of stages, each
// a module the composition calls in turn and none of which calls back up:
//
//   1. list files      src/logs/cache/cache-check.ts listRun (src/logs/walk.ts)
//   2. cache check     src/logs/cache/cache-check.ts checkRunCache
//   3. read records    src/logs/read-run.ts → records.ts → the format readers
//   4. assemble groups src/logs/assemble.ts (inside the read: a group is handed out once complete)
//   5. score           group-scheduler.ts (main thread and worker threads), then the sink and the
//                      cache's fill (src/logs/cache/cache-fill.ts)
//
// Stages 1–4 through the cache are src/logs/cache/cached-run.ts `openRunCache`; without it (stdin,
// a shard, --no-cache) stages 3–4 are `readRun` alone.
import { statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { readRun, type Notice, type ReadRunOptions } from '../logs/log-layer';
import { openRunCache, type CachedGroup, type CachedRun, type Footer, type RunCacheOptions } from '../logs/cache/cached-run';
import { DEFAULT_MAX_GROUP_SIZE, checkGroupSize, type Group } from '../engine';
import { GroupScheduler, groupFailed, type Remote } from './group-scheduler';

export type { Remote } from './group-scheduler';

/**
 * A file this large holds more than a few groups of any realistic size (8 × 64 roll-outs of 2 KB
 * is 1 MiB), so the workers are started before reading: their start-up (a Node context, the
 * worker bundle, the kernels' compilation) then overlaps the parsing of the first groups instead
 * of following it.
 */
const EAGER_WORKERS_BYTES = 1 << 20;

export interface ForEachGroupOptions {
  read?: ReadRunOptions;
  maxGroupSize?: number;
  backlog?: number;
  /** Which groups this process scores (`--shard`); every group read is offered, in order. */
  keep?: (g: Group) => boolean;
  /** Read the run through its persisted cache (src/logs/cache; never for stdin, never for a shard, whose cache would hold only its own groups). */
  cache?: RunCacheOptions;
  /** The run's cache, already opened (a miss or an extension) by the caller; with `onlyNew`, only the groups read from the files are handled (building the cache). */
  opened?: CachedRun;
  onlyNew?: boolean;
  /**
   * A worker keeps no per-question state for this work (no MS-TTRL, or only the cosines): the
   * groups a dead worker held are re-scored on the main thread and its questions move on.
   * Otherwise they, and their questions' later groups, are reported as not scored.
   */
  rescore?: boolean;
}

/**
 * Runs `work` on every group of the run, on `jobs` threads when there are enough groups
 * (group-scheduler.ts), and hands the results to `sink` in the order the groups were read. Used by
 * score, sweep, report, health and index.
 */
export async function forEachGroup<T>(
  path: string,
  onNotice: (n: Notice) => void,
  jobs: number,
  local: (g: Group) => T,
  /** What a worker thread does for a group scored off the main thread (the value must be `local(g)`'s). */
  remote: (g: Group) => Remote<T>,
  sink: (value: T, g: Group) => void,
  stdin?: NodeJS.ReadableStream,
  opts: ForEachGroupOptions = {},
): Promise<{ groups: number; cache?: { state: CachedRun['state']; file: string; footer?: Footer } }> {
  const read = opts.read ?? {};
  // stages 1–4
  const cached = opts.opened ?? (opts.cache && !opts.keep && path !== '-' ? await openRunCache(path, onNotice, read, opts.cache) : undefined);
  const source = cached ? (opts.onlyNew && cached.fresh ? cached.fresh : cached.groups) : readRun(path, onNotice, stdin ? { ...read, stdin: stdin as Readable } : read);
  // stage 5; each group's features go to the cache once its work is done (in the run's order): a
  // group that failed has none, and then no cache is written
  const scheduler = new GroupScheduler<T>({
    jobs,
    local,
    remote: cached && cached.state !== 'hit' ? withFeatures(remote) : remote,
    sink: (v, g) => {
      sink(v, g);
      cached?.done(g);
    },
    failed: (g) => cached?.done(g as CachedGroup & { prepared?: undefined }),
    onNotice,
    backlog: opts.backlog,
    rescore: opts.rescore,
  });
  // From the cache nothing is parsed: the workers' early start would only be overhead.
  if (path !== '-' && cached?.state !== 'hit' && fileSize(path) >= EAGER_WORKERS_BYTES) scheduler.startEarly();
  const maxGroupSize = opts.maxGroupSize ?? DEFAULT_MAX_GROUP_SIZE;
  let groups = 0;
  try {
    for await (const g of source) {
      groups++;
      if (opts.keep && !opts.keep(g)) continue;
      try {
        checkGroupSize(g, maxGroupSize);
      } catch (e) {
        onNotice(groupFailed(g, e));
        cached?.done(g as CachedGroup & { prepared?: undefined });
        continue;
      }
      await scheduler.add(g);
    }
    await scheduler.finish();
  } finally {
    await scheduler.close();
  }
  if (!cached) return { groups };
  return { groups, cache: { state: cached.state, file: cached.file, footer: cached.state === 'hit' ? cached.footer : cached.finish() } };
}

/** While the cache is written a worker computes the group's whole features and sends them back with the value. */
function withFeatures<T>(remote: (g: Group) => Remote<T>): (g: Group) => Remote<T> {
  return (g) => {
    const r = remote(g);
    if (!(g as CachedGroup).fillCache) return r;
    return {
      request: r.request,
      finish: (answer) => {
        const a = answer as { value: unknown; prepared: CachedGroup['prepared'] };
        (g as CachedGroup).prepared = a.prepared;
        return r.finish ? r.finish(a.value) : (a.value as T);
      },
    };
  };
}

function fileSize(path: string): number {
  try {
    const st = statSync(path);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}
