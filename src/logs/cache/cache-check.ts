// Stages 1 and 2 of a run's read through its persisted cache (ARCHITECTURE.md, "The CLI's read
// path"): the run's files and their identities (stage 1, listRunFiles), then what the cache can
// give for them (stage 2): every group ('hit'), the cached groups followed by those of lines
// appended to the run's last file ('extend'), or nothing ('miss': the run is read and the cache
// rebuilt). Nothing is read here but identities, and for an extension the appended lines' keys.
// The cache's rules and format: run-cache.ts.
import { join } from 'node:path';
import { appendedKeys, type FileReadState } from '../read-run.js';
import { listRunFiles } from '../walk.js';
import type { LogFormat, Notice } from '../log-types.js';
import { cacheDir, cacheKey, checkCache, type Footer } from './run-cache.js';
import { fileIdentity, grewFrom, sameIdentity, type FileIdentity } from './identity.js';

/** Stage 1: the run's files in reading order, their identities, and the notices the listing gave (a read given `listed` replays them). */
export interface RunFiles {
  files: string[];
  identities: FileIdentity[];
  notices: Notice[];
}

/** An extension's plan: the cache `base`, and where its read of the run's last file stopped. */
export interface AppendPlan {
  base: Footer;
  last: string;
  from: FileReadState & { format: LogFormat };
}

export type CachePlan = { key: string; file: string } & ({ state: 'hit'; footer: Footer } | { state: 'miss'; why?: string } | ({ state: 'extend' } & AppendPlan));

/** Stage 1. Undefined when PATH cannot be listed (the read then says why). */
export async function listRun(path: string): Promise<RunFiles | undefined> {
  const notices: Notice[] = [];
  try {
    const files = await listRunFiles(path, (n) => notices.push(n));
    return { files, identities: files.map((f) => fileIdentity(f)), notices };
  } catch {
    return undefined;
  }
}

/** Stage 2: the cache file for PATH read with `groundTruth`, and what it can give for the files `listed`. */
export async function checkRunCache(path: string, listed: RunFiles | undefined, groundTruth: string, dir: string = cacheDir()): Promise<CachePlan> {
  const key = cacheKey(path, { groundTruth });
  const file = join(dir, `${key}.clc`);
  if (!listed) return { key, file, state: 'miss' };
  const c = checkCache(file, key, listed.identities);
  if (c.ok) return { key, file, state: 'hit', footer: c.footer };
  if (c.why === 'stale' && c.footer) {
    const plan = await appendPlan(path, c.footer, listed.identities);
    if (plan) return { key, file, state: 'extend', ...plan };
    return { key, file, state: 'miss' };
  }
  return { key, file, state: 'miss', why: c.why === 'none' ? undefined : c.why };
}

/**
 * Can the cache `base` be extended to the run's files `now`? Only when every file is as it was
 * but the last, which grew from the size it had (the same device and inode, its first and its
 * last 64 KiB of then unchanged), holds native JSON Lines, and whose new lines are all group
 * records of new groups: then the run's groups are the cached ones followed by those of the new
 * lines, as a fresh read gives them. Anything else (a roll-out record, which may belong to a
 * cached group; a group already cached, which a fresh read reports as a duplicate) is a full read.
 */
async function appendPlan(path: string, base: Footer, now: FileIdentity[]): Promise<AppendPlan | undefined> {
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
