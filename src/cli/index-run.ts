// `consensus-lens index` (docs/contract.md#command-line), and the pass that builds a run's persisted
// cache for `sweep`: every group read once and prepared with everything a later command may need
// (answers, classes, within-class cosines, confidences, health measures), on the scoring threads,
// its features written to the cache (src/logs/cache). On an unchanged run nothing is read but the
// files' identities.
import { statSync } from 'node:fs';
import { openRunCache, preparedOf, type CachedGroup, type Footer, type RunCacheOptions } from '../logs/cache/cached-run';
import type { Notice, ReadRunOptions } from '../logs/log-layer';
import { DEFAULT_MAX_GROUP_SIZE } from '../engine';
import { type CliIO, UsageError, flagBool, flagString, groundTruthFromFlags, parseCommand } from './args';
import { forEachGroup } from './for-each-group';
import { jobsFrom, maxGroupSizeFrom } from './run-options';
import { Outcome } from './outcome';
import { safeText } from '../logs/safe-text';

export interface IndexResult {
  /** 'hit': the cache was valid; 'built': written now; 'extended': the lines appended to the run's last file added; 'failed': not written (a read error, a group not prepared, the folder not writable). */
  state: 'hit' | 'built' | 'extended' | 'failed';
  file: string;
  footer?: Footer;
  groups: number;
  /** Bytes of the run's files read now, and reused from the cache. */
  bytesRead: number;
  bytesReused: number;
}

/** Builds or checks PATH's cache. Notices go to `onNotice` (replayed from the cache on a hit). */
export async function indexRun(
  path: string,
  onNotice: (n: Notice) => void,
  jobs: number,
  opts: { read: ReadRunOptions; cache: RunCacheOptions; maxGroupSize?: number; onGroup?: () => void },
): Promise<IndexResult> {
  const maxGroupSize = opts.maxGroupSize ?? DEFAULT_MAX_GROUP_SIZE;
  const opened = await openRunCache(path, onNotice, opts.read, opts.cache);
  if (opened.state === 'hit') {
    const footer = opened.footer!;
    for (const n of footer.notices) onNotice(n);
    return { state: 'hit', file: opened.file, footer, groups: footer.groups, bytesRead: 0, bytesReused: footer.files.reduce((a, f) => a + f.size, 0) };
  }
  const before = opts.read.stats?.bytes ?? 0;
  const prepare = (g: CachedGroup) => {
    preparedOf(g, { reasoning: true, health: true, maxGroupSize });
    return null;
  };
  const { groups, cache } = await forEachGroup(
    path,
    onNotice,
    jobs,
    (g) => prepare(g),
    (g) => ({ request: { kind: 'index', group: g, maxGroupSize } }),
    () => opts.onGroup?.(),
    undefined,
    { read: opts.read, maxGroupSize, cache: opts.cache, opened, onlyNew: true, rescore: true },
  );
  const footer = cache?.footer;
  const bytesRead = (opts.read.stats?.bytes ?? 0) - before;
  // an extension read the appended bytes only: the rest of the run's bytes were reused
  const bytesReused = opened.state === 'extend' && footer ? footer.files.reduce((a, f) => a + f.size, 0) - bytesRead : 0;
  return { state: footer ? (opened.state === 'extend' ? 'extended' : 'built') : 'failed', file: opened.file, footer, groups: footer?.groups ?? groups, bytesRead, bytesReused };
}

const mib = (b: number): string => `${(b / 1048576).toFixed(b < 10 * 1048576 ? 1 : 0)} MiB`;
const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

export async function runIndex(argv: string[], io: CliIO): Promise<number> {
  const a = parseCommand('index', argv);
  const path = a.positionals[0];
  if (!path) throw new UsageError('index needs a PATH (a run folder or a log file)');
  if (a.positionals.length > 1) throw new UsageError(`index takes one PATH, got ${a.positionals.length}`);
  if (path === '-') throw new UsageError('index needs a PATH: standard input cannot be cached (it cannot be read again)');
  const outcome = new Outcome(io, a);
  const r = await indexRun(path, outcome.notice, jobsFrom(flagString(a, 'jobs')), {
    read: { groundTruth: groundTruthFromFlags(a), stats: outcome.stats },
    cache: {},
    maxGroupSize: maxGroupSizeFrom(flagString(a, 'max-group-size')),
    onGroup: () => outcome.progress?.tick(),
  });
  const footer = r.footer;
  let cacheBytes = 0;
  try {
    cacheBytes = footer ? statSync(r.file).size : 0;
  } catch {
    /* removed meanwhile: 0 */
  }
  const summary = {
    run: path,
    state: r.state,
    files: footer?.files.length ?? 0,
    groups: footer?.groups ?? r.groups,
    rollouts: footer?.rollouts ?? null,
    bytes_read: r.bytesRead,
    bytes_reused: r.bytesReused,
    cache_file: footer ? r.file : null,
    cache_bytes: cacheBytes,
  };
  if (flagBool(a, 'json')) io.stdout.write(JSON.stringify(summary) + '\n');
  else if (footer) {
    const what = r.state === 'hit' ? 'unchanged, cache reused' : r.state === 'extended' ? 'appended lines added to the cache' : 'cache written';
    io.stdout.write(
      `${safeText(path)}: ${what}: ${plural(summary.files, 'file')}, ${plural(footer.groups, 'group')}, ${plural(footer.rollouts, 'roll-out')}; ${mib(r.bytesRead)} read, ${mib(r.bytesReused)} reused; cache ${mib(cacheBytes)} (${safeText(r.file)})\n`,
    );
  } else io.stdout.write(`${safeText(path)}: no cache written (see the messages above); ${plural(r.groups, 'group')} read, ${mib(r.bytesRead)}\n`);
  const code = outcome.finish();
  if (code === 0 && !footer) return 1;
  return code;
}
