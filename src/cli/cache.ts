// `consensus-lens cache info|clear`: the persisted run cache's folder, size and bound
// (src/logs/cache/bound.ts), and removing it. `info --json` prints
// {"dir", "files", "bytes", "limit_bytes"} (limit_bytes null: no bound).
import { cacheDir } from '../logs/cache/cached-run.js';
import { cacheEntries, cacheLimit, clearCache } from '../logs/cache/bound.js';
import { UsageError, type CliIO } from './args';

export const CACHE_USAGE = 'cache info [--json] | cache clear';
export const CACHE_SUMMARY = "the persisted run cache: its folder, size and bound (info), or remove it (clear)";

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

export async function runCache(argv: string[], io: CliIO): Promise<number> {
  const [action, ...rest] = argv;
  const dir = cacheDir();
  if (action === 'info') {
    const json = rest.length === 1 && rest[0] === '--json';
    if (rest.length > (json ? 1 : 0)) throw new UsageError(`cache info: unexpected ${rest[0]} (usage: consensus-lens ${CACHE_USAGE})`);
    const limit = cacheLimit();
    const { entries } = cacheEntries(dir);
    const bytes = entries.reduce((s, e) => s + e.bytes, 0);
    if (json) io.stdout.write(`${JSON.stringify({ dir, files: entries.length, bytes, limit_bytes: Number.isFinite(limit) ? limit : null })}\n`);
    else io.stdout.write(`${dir}: ${entries.length} file${entries.length === 1 ? '' : 's'}, ${mb(bytes)}; bound ${Number.isFinite(limit) ? mb(limit) : 'none'} (CONSENSUS_LENS_CACHE_MAX_MB)\n`);
    return 0;
  }
  if (action === 'clear') {
    if (rest.length) throw new UsageError(`cache clear: unexpected ${rest[0]} (usage: consensus-lens ${CACHE_USAGE})`);
    const { removed, freed } = clearCache(dir);
    io.stdout.write(`${dir}: removed ${removed} file${removed === 1 ? '' : 's'}, ${mb(freed)}\n`);
    return 0;
  }
  throw new UsageError(`${action === undefined ? 'cache needs info or clear' : `cache: unknown action "${action}"`} (usage: consensus-lens ${CACHE_USAGE})`);
}
