// The persisted cache's size bound and its upkeep (`consensus-lens cache info|clear`): the cache
// folder (run-cache.ts, cacheDir) holds one features file per run and reading options (.clc) and
// one results file per run and setting (.clr); nothing else removes them, so after each command
// that wrote one the least recently used are removed until the folder is under its bound
// ($CONSENSUS_LENS_CACHE_MAX_MB, default 4096 MB; 0 means no bound). The newest file is always
// kept. Only the cache's own files are touched (the folder may be one the user shares), and a
// temporary file is removed only when the process writing it is gone.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../../util/errors';

export const DEFAULT_CACHE_MAX_MB = 4096;
const CACHE_FILE = /^[0-9a-f]{64}\.(clc|clr)$/;
/** CacheWriter's and the results' temporary files: `<cache file>.<pid>.<hex>.tmp`. */
const TEMP_FILE = /^[0-9a-f]{64}\.(clc|clr)\.(\d+)\.[0-9a-f]+\.tmp$/;

export interface CacheEntry {
  name: string;
  bytes: number;
  /** Last use: the later of the last read and the last write. */
  used: number;
}

/** The bound in bytes ($CONSENSUS_LENS_CACHE_MAX_MB), Infinity for none. */
export function cacheLimit(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CONSENSUS_LENS_CACHE_MAX_MB;
  const mb = raw === undefined || raw.trim() === '' ? DEFAULT_CACHE_MAX_MB : Number(raw);
  if (!Number.isFinite(mb) || mb < 0) throw new Error(`CONSENSUS_LENS_CACHE_MAX_MB must be a number of megabytes ≥ 0 (0: no bound), not "${raw}"`);
  return mb === 0 ? Number.POSITIVE_INFINITY : mb * 1024 * 1024;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM'; // alive, another user's
  }
}

/** The cache's files in `dir` (none when it does not exist), and its orphaned temporary files. */
export function cacheEntries(dir: string): { entries: CacheEntry[]; orphans: string[] } {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { entries: [], orphans: [] };
  }
  const entries: CacheEntry[] = [];
  const orphans: string[] = [];
  for (const name of names) {
    const temp = TEMP_FILE.exec(name);
    if (temp) {
      if (Number(temp[2]) !== process.pid && !alive(Number(temp[2]))) orphans.push(name);
      continue;
    }
    if (!CACHE_FILE.test(name)) continue;
    try {
      const s = statSync(join(dir, name));
      if (s.isFile()) entries.push({ name, bytes: s.size, used: Math.max(s.atimeMs, s.mtimeMs) });
    } catch {
      // removed meanwhile (another process's upkeep)
    }
  }
  return { entries, orphans };
}

/** Removes the least recently used files until the rest fit in `limit` bytes; the newest is kept. */
export function pruneCache(dir: string, limit: number = cacheLimit()): { removed: number; freed: number } {
  const { entries, orphans } = cacheEntries(dir);
  for (const o of orphans) rmSync(join(dir, o), { force: true });
  let total = entries.reduce((s, e) => s + e.bytes, 0);
  let removed = 0;
  let freed = 0;
  const oldestFirst = entries.sort((a, b) => a.used - b.used || a.name.localeCompare(b.name));
  for (const e of oldestFirst.slice(0, -1)) {
    if (total <= limit) break;
    rmSync(join(dir, e.name), { force: true });
    total -= e.bytes;
    freed += e.bytes;
    removed++;
  }
  return { removed, freed };
}

/** Removes every cache file (and orphaned temporary file) in `dir`. */
export function clearCache(dir: string): { removed: number; freed: number } {
  const { entries, orphans } = cacheEntries(dir);
  for (const o of orphans) rmSync(join(dir, o), { force: true });
  for (const e of entries) rmSync(join(dir, e.name), { force: true });
  return { removed: entries.length, freed: entries.reduce((s, e) => s + e.bytes, 0) };
}
