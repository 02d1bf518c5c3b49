// Run discovery: a run is one file or a folder, read recursively. Hidden entries (names starting
// with '.') are skipped; symbolic links are followed, but a directory already visited (by its real
// path) is not entered again, so symlink loops end.
import type { Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NoticeSink } from './types.js';

/** Natural order: "2.jsonl" before "10.jsonl" (verl names files by step). */
export const naturalCompare = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' }).compare;

/** The files of a run in natural order; `stats`, when given, receives each file's stat. */
export async function listRunFiles(root: string, onNotice: NoticeSink, stats?: Map<string, Stats>, dirs?: Set<string>): Promise<string[]> {
  const st = await stat(root);
  if (!st.isDirectory()) {
    stats?.set(root, st);
    return [root];
  }
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    let real: string;
    try {
      real = await realpath(dir);
    } catch (err) {
      onNotice({ level: 'warning', message: `cannot resolve folder ${dir}: ${(err as Error).message}; skipped`, file: dir });
      return;
    }
    if (seen.has(real)) return; // a symlink back into a folder already read (a loop, or an alias)
    seen.add(real);
    dirs?.add(dir);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      onNotice({ level: 'warning', message: `cannot read folder ${dir}: ${(err as Error).message}; skipped`, file: dir });
      return;
    }
    names.sort(naturalCompare);
    const subdirs: string[] = [];
    // stat in small parallel batches: a folder of 10,000 files must not take 10,000 round trips in series
    const BATCH = 64;
    for (let i = 0; i < names.length; i += BATCH) {
      const slice = names.slice(i, i + BATCH).filter((n) => !n.startsWith('.'));
      const results = await Promise.all(
        slice.map((n) =>
          stat(join(dir, n)).then(
            (s) => ({ n, s, err: undefined as NodeJS.ErrnoException | undefined }),
            (err: NodeJS.ErrnoException) => ({ n, s: undefined, err }),
          ),
        ),
      );
      for (const { n, s, err } of results) {
        const p = join(dir, n);
        if (!s) {
          if (err?.code === 'ELOOP') onNotice({ level: 'warning', message: `${p}: symbolic link loop; skipped`, file: p });
          else if (err?.code !== 'ENOENT') onNotice({ level: 'warning', message: `${p}: ${err?.message}; skipped`, file: p });
          continue;
        }
        if (s.isDirectory()) subdirs.push(p);
        else if (s.isFile()) {
          out.push(p);
          stats?.set(p, s);
        }
      }
    }
    for (const d of subdirs) await walk(d);
  };
  await walk(root);
  return out;
}
