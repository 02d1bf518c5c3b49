// Run discovery: a run is one file or a folder, read recursively. Hidden entries (names starting
// with '.') are skipped. The walk never leaves the run folder through a symbolic link: a link to a
// file is read (it is one log), a link to a folder is not entered (a repository could plant
// `p -> /proc/self` or `u -> /usr`), and a dangling link is reported. A folder already visited by
// its real path (a bind mount, a hard-linked tree) is not entered again. The walk is bounded in
// depth and in files, with a notice when a bound cuts it short.
import type { Stats } from 'node:fs';
import { errnoCode, errorMessage } from '../util/errors';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, parse, resolve } from 'node:path';
import type { NoticeSink } from './log-types.js';
import { tableRoot } from './join.js';

/** Natural order: "2.jsonl" before "10.jsonl" (verl names files by step). */
export const naturalCompare = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' }).compare;

/** Default bounds of a run-folder walk (documented in docs/log-formats.md). */
export const WALK_MAX_FILES = 50_000;
export const WALK_MAX_DEPTH = 12;
/** Folders entered (each may get a file watcher when the run is followed). */
export const WALK_MAX_DIRS = 2_000;

export interface WalkOptions {
  /** At most this many files are listed (default WALK_MAX_FILES). */
  maxFiles?: number;
  /** Folders deeper than this below the root are not entered (default WALK_MAX_DEPTH). */
  maxDepth?: number;
  /** At most this many folders are entered (default WALK_MAX_DIRS). */
  maxDirs?: number;
}

/**
 * Why `path` can never be a run to follow automatically (a `consensusLens.runs` entry, a workspace
 * scan), or undefined: the file-system root and the home folder are not runs — a workspace setting
 * pointing there would walk the whole disk.
 */
export function unsafeRunRoot(path: string, home: string = homedir()): string | undefined {
  const p = resolve(path);
  if (p === parse(p).root) return `${path} is the root of the file system, not a run folder`;
  if (home && p === resolve(home)) return `${path} is the home folder, not a run folder`;
  return undefined;
}

/**
 * The files of a run in natural order; `stats`, when given, receives each file's stat; `dirs` the
 * folders walked (for file watchers).
 */
export async function listRunFiles(root: string, onNotice: NoticeSink, stats?: Map<string, Stats>, dirs?: Set<string>, opts: WalkOptions = {}): Promise<string[]> {
  const st = await stat(root);
  // A FIFO, socket or device would block a read forever (or never end): refused at the door.
  if (!st.isDirectory() && !st.isFile()) throw new Error(`${root} is not a regular file or folder (a FIFO, socket or device); not read`);
  if (!st.isDirectory()) {
    stats?.set(root, st);
    return [root];
  }
  const maxFiles = opts.maxFiles ?? WALK_MAX_FILES;
  const maxDepth = opts.maxDepth ?? WALK_MAX_DEPTH;
  const maxDirs = opts.maxDirs ?? WALK_MAX_DIRS;
  let entered = 0;
  let skippedDirs = 0;
  const out: string[] = [];
  const seen = new Set<string>();
  let linkedDirs = 0;
  let firstLinkedDir = '';
  let tooDeep = 0;
  let full = false;
  const walk = async (dir: string, depth: number): Promise<void> => {
    let real: string;
    try {
      real = await realpath(dir);
    } catch (err) {
      onNotice({ level: 'warning', message: `cannot resolve folder ${dir}: ${errorMessage(err)}; skipped`, file: dir });
      return;
    }
    if (seen.has(real)) return; // the same folder again (a bind mount or an alias)
    seen.add(real);
    if (entered++ >= maxDirs) {
      skippedDirs++;
      return;
    }
    dirs?.add(dir);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      onNotice({ level: 'warning', message: `cannot read folder ${dir}: ${errorMessage(err)}; skipped`, file: dir });
      return;
    }
    names.sort(naturalCompare);
    const subdirs: string[] = [];
    // stat in small parallel batches: a folder of 10,000 files must not take 10,000 round trips in series
    const BATCH = 64;
    for (let i = 0; i < names.length && !full; i += BATCH) {
      const slice = names.slice(i, i + BATCH).filter((n) => !n.startsWith('.'));
      const results = await Promise.all(
        slice.map(async (n) => {
          const p = join(dir, n);
          try {
            const l = await lstat(p);
            if (!l.isSymbolicLink()) return { n, s: l, link: false, err: undefined as unknown };
            return { n, s: await stat(p), link: true, err: undefined };
          } catch (err) {
            return { n, s: undefined, link: true, err: err as unknown };
          }
        }),
      );
      for (const { n, s, link, err } of results) {
        const p = join(dir, n);
        if (!s) {
          const code = errnoCode(err);
          if (code === 'ELOOP') onNotice({ level: 'warning', message: `${p}: symbolic link loop; skipped`, file: p });
          else if (code === 'ENOENT' && link) onNotice({ level: 'warning', message: `${p}: dangling symbolic link (its target does not exist); skipped`, file: p });
          else if (code !== 'ENOENT') onNotice({ level: 'warning', message: `${p}: ${errorMessage(err)}; skipped`, file: p });
          continue;
        }
        if (s.isDirectory()) {
          if (link) {
            // never leave the run folder through a link: its target may be anywhere
            if (linkedDirs++ === 0) firstLinkedDir = p;
            continue;
          }
          if (depth + 1 > maxDepth) {
            tooDeep++;
            continue;
          }
          subdirs.push(p);
        } else if (s.isFile()) {
          if (out.length >= maxFiles) {
            full = true;
            break;
          }
          out.push(p);
          stats?.set(p, s);
        }
      }
    }
    for (const d of subdirs) {
      if (full) break;
      await walk(d, depth + 1);
    }
  };
  await walk(root, 0);
  if (linkedDirs) {
    onNotice({
      level: 'warning',
      message: `${firstLinkedDir}: symbolic link to a folder, not followed${linkedDirs > 1 ? ` (and ${linkedDirs - 1} more)` : ''}: a run is read only inside its folder`,
      file: firstLinkedDir,
    });
  }
  if (tooDeep) onNotice({ level: 'warning', message: `${root}: ${tooDeep} folders deeper than ${maxDepth} levels not read`, file: root });
  if (skippedDirs) onNotice({ level: 'warning', message: `${root}: more than ${maxDirs} folders; ${skippedDirs} not read`, file: root });
  if (full) onNotice({ level: 'warning', message: `${root}: more than ${maxFiles} files; only the first ${maxFiles} are read`, file: root });
  return out;
}

/**
 * The order in which a run's files are read (`listRunFiles`' order — a folder's files by natural
 * name order, then its sub-folders, depth first — with TRL's completions tables last, as readRun
 * reads them): the followed index keeps its groups in the order of a fresh read with it.
 */
export function compareRunPaths(a: string, b: string): number {
  if (a === b) return 0;
  // TRL's completions tables after every other file: their groups join the log beside them (join.ts).
  const ta = tableRoot(a) !== undefined;
  if (ta !== (tableRoot(b) !== undefined)) return ta ? 1 : -1;
  const pa = a.split(/[\\/]/);
  const pb = b.split(/[\\/]/);
  let k = 0;
  while (k < pa.length && k < pb.length && pa[k] === pb[k]) k++;
  const fileA = k === pa.length - 1;
  const fileB = k === pb.length - 1;
  if (fileA !== fileB) return fileA ? -1 : 1;
  return naturalCompare(pa[k] ?? '', pb[k] ?? '');
}
