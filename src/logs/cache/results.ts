// Persisted per-group results of one command at one setting (a report's rows and health records at
// given operators and parameters), beside the run's features (run-cache.ts): the same folder, the
// same validity (every file of the run has the identity it had), keyed by the run and by the
// setting, checksummed, written whole. A `report` repeated on an unchanged run at the same setting
// reads its rows; at another setting it scores the cached features.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { listRunFiles } from '../walk.js';
import type { Notice } from '../log-types.js';
import { CACHE_FORMAT, cacheDir, cacheKey } from './run-cache.js';
import { fileIdentity, sameIdentity, type FileIdentity } from './identity.js';

const MAGIC = Buffer.from('CLRESULT', 'latin1');

interface Stored<T> {
  format: number;
  key: string;
  files: FileIdentity[];
  notices: Notice[];
  values: T[];
}

export type ResultsLookup<T> = { hit: true; notices: Notice[]; values: T[] } | { hit: false; files?: FileIdentity[]; save(notices: Notice[], values: T[]): void };

/** The results of `setting` for the run at `path`, when stored for exactly its present files. */
export async function lookupResults<T>(path: string, setting: unknown, dir: string = cacheDir()): Promise<ResultsLookup<T>> {
  const key = cacheKey(path, { results: setting });
  const file = join(dir, `${key}.clr`);
  let files: FileIdentity[] | undefined;
  try {
    files = (await listRunFiles(path, () => undefined)).map((f) => fileIdentity(f));
  } catch {
    files = undefined;
  }
  if (files) {
    try {
      const b = readFileSync(file);
      if (b.length > 28 && b.subarray(0, 8).equals(MAGIC)) {
        const body = b.subarray(28);
        if (createHash('sha1').update(body).digest().equals(b.subarray(8, 28))) {
          const s = deserialize(body) as Stored<T>;
          if (s && s.format === CACHE_FORMAT && s.key === key && Array.isArray(s.values) && Array.isArray(s.notices) && Array.isArray(s.files) && s.files.length === files.length && s.files.every((f, i) => sameIdentity(f, files![i]))) return { hit: true, notices: s.notices, values: s.values };
        }
      }
    } catch {
      /* none, unreadable or foreign: computed again and rewritten */
    }
  }
  return {
    hit: false,
    files,
    save(notices, values) {
      if (!files || notices.some((n) => n.level === 'error')) return;
      // a file that changed while the run was read: these results do not describe it
      try {
        if (!files.every((f) => sameIdentity(fileIdentity(f.path), f))) return;
      } catch {
        return;
      }
      // notices about the cache files themselves (one rebuilt, say) are said once, not replayed
      const kept = notices.filter((n) => !n.file?.startsWith(join(dir, '/')));
      const body = serialize({ format: CACHE_FORMAT, key, files, notices: kept, values } satisfies Stored<T>);
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(tmp, Buffer.concat([MAGIC, createHash('sha1').update(body).digest(), body]), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        rmSync(tmp, { force: true });
      }
    },
  };
}
