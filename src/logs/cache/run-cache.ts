// The persisted run cache: a run's groups (the assembler's output, without texts) and each group's
// features that no operator parameter changes (PreparedGroup: answers, classes, within-class
// cosines, confidences, verification, the health text measures), kept outside the run folder so a
// second `report`, `sweep` or `health` on an unchanged run reads features, not texts.
//
// Where: $CONSENSUS_LENS_CACHE_DIR, else $XDG_CACHE_HOME/consensus-lens, else
// ~/.cache/consensus-lens (`cacheDir`); one file per run and reading options (`cacheKey`).
//
// Valid only for the same files: every log file of the run has the identity it had when the cache
// was written — device, inode, size, modification and change times, and a hash of its first and of
// its last 64 KiB (identity.ts) — and the set of files is the same. Anything else (a file appended
// to, truncated, replaced, rewritten, added or deleted) and the run is read again from the files and
// the cache rewritten. A cache file that is not ours, of another format, truncated, or whose bytes
// do not hash to what its footer says is never trusted: it is read again and rebuilt (an info
// notice says so). A cache is only written for a run read without error and whose every group was
// prepared; it is written to a temporary file and renamed into place, so a cache file is whole.
//
// Format, for the access pattern (written once by appending, read back whole in order, or one group
// at a time): a sequence of length-prefixed records, one per group in the run's order, each a V8
// structured-clone serialisation (typed arrays — the cosines, exact float64 — stored as raw bytes,
// no text encoding), then a JSON footer (the files' identities, the run's notices to replay, the
// offset of every record for random reads of one group, the SHA-1 of the records) and a fixed
// trailer. See ARCHITECTURE.md (Decisions) for why not JSON lines or SQLite.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync, mkdirSync, fstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { PreparedGroup } from '../../engine';
import type { Group } from '../../engine';
import type { GroupEntry } from '../entries.js';
import { entryToGroup, rolloutsOf } from '../entries.js';
import type { Notice } from '../types.js';
import { fileIdentity, sameIdentity, type FileIdentity } from './identity.js';

/** Bump when the records' shape or anything prepareGroup computes changes. */
export const CACHE_FORMAT = 1;
const MAGIC = Buffer.from('CLCACHE\u0001', 'latin1');
const TRAILER = Buffer.from('CLCFOOT\u0001', 'latin1');

export interface Footer {
  format: number;
  key: string;
  run: string;
  files: FileIdentity[];
  notices: Notice[];
  groups: number;
  rollouts: number;
  /** Byte offset of each record (after MAGIC). */
  offsets: number[];
  /** End of the records. */
  end: number;
  sha1: string;
}

/** The cache folder: configurable by environment, outside every run folder. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONSENSUS_LENS_CACHE_DIR) return resolve(env.CONSENSUS_LENS_CACHE_DIR);
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), 'consensus-lens');
  return join(homedir(), '.cache', 'consensus-lens');
}

/** The key of a run's cache: its absolute path and the reading options that change the groups. */
export function cacheKey(run: string, options: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify([CACHE_FORMAT, resolve(run), options])).digest('hex');
}

/** A group as the cache keeps it: the index entry (no version: versions belong to a process) and its prepared features without the sources (rebuilt from the entry). */
interface CachedRecord {
  e: Omit<GroupEntry, 'version'>;
  p: Omit<PreparedGroup, 'sources'> | null;
}

export type CacheCheck = { ok: true; footer: Footer } | { ok: false; why: string };

/** Reads and checks a cache file's footer, and that its records hash to it. */
export function checkCache(file: string, key: string, files: FileIdentity[]): CacheCheck {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { ok: false, why: 'none' };
  }
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(12);
    if (size < MAGIC.length + tail.length) return { ok: false, why: 'truncated' };
    readSync(fd, tail, 0, 12, size - 12);
    const head = Buffer.alloc(MAGIC.length);
    readSync(fd, head, 0, head.length, 0);
    if (!head.equals(MAGIC) || !tail.subarray(4).equals(TRAILER)) return { ok: false, why: 'not a consensus-lens cache of this format' };
    const flen = tail.readUInt32LE(0);
    if (flen > size - 12 - MAGIC.length) return { ok: false, why: 'truncated' };
    const fbuf = Buffer.alloc(flen);
    readSync(fd, fbuf, 0, flen, size - 12 - flen);
    let footer: Footer;
    try {
      footer = JSON.parse(fbuf.toString('utf8')) as Footer;
    } catch {
      return { ok: false, why: 'its footer is not JSON' };
    }
    if (footer.format !== CACHE_FORMAT || footer.key !== key) return { ok: false, why: 'written for another run or format' };
    if (footer.end !== size - 12 - flen || !Array.isArray(footer.offsets) || footer.offsets.length !== footer.groups) return { ok: false, why: 'its footer does not match its size' };
    if (!sameFiles(footer.files, files)) return { ok: false, why: 'stale' };
    // the records hash to the footer's SHA-1 (a flipped byte is a rebuild, never a wrong number)
    const h = createHash('sha1');
    const buf = Buffer.alloc(1 << 20);
    for (let pos = MAGIC.length; pos < footer.end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, footer.end - pos), pos);
      if (n <= 0) return { ok: false, why: 'truncated' };
      h.update(buf.subarray(0, n));
      pos += n;
    }
    if (h.digest('hex') !== footer.sha1) return { ok: false, why: 'its records do not match their checksum (corrupt)' };
    return { ok: true, footer };
  } finally {
    closeSync(fd);
  }
}

function sameFiles(a: FileIdentity[], b: FileIdentity[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameIdentity(a[i], b[i])) return false;
  return true;
}

/** The engine's Group of a cached record, texts empty and `prepared` attached. */
function toGroup(r: CachedRecord): Group & { prepared?: PreparedGroup } {
  const e = { ...r.e, version: 0 } as GroupEntry;
  const rollouts = rolloutsOf(e);
  const g: Group & { prepared?: PreparedGroup } = entryToGroup(e, rollouts.map(() => ''), rollouts);
  if (r.p) g.prepared = { ...r.p, sources: rollouts.map((x) => x.source) } as PreparedGroup;
  return g;
}

/** The cached groups in the run's order (the file was checked by `checkCache`). */
export function* replayCache(file: string, footer: Footer): Generator<Group & { prepared?: PreparedGroup }> {
  const fd = openSync(file, 'r');
  try {
    let buf = Buffer.alloc(1 << 20);
    let start = MAGIC.length; // file position of buf[0]
    let have = 0;
    let at = 0;
    const fill = (need: number) => {
      if (at + need <= have) return;
      const keep = have - at;
      if (need > buf.length) {
        const nb = Buffer.alloc(Math.max(need, buf.length * 2));
        buf.copy(nb, 0, at, have);
        buf = nb;
      } else buf.copy(buf, 0, at, have);
      start += at;
      at = 0;
      have = keep;
      while (have < need) {
        const n = readSync(fd, buf, have, Math.min(buf.length - have, footer.end - (start + have)), start + have);
        if (n <= 0) throw new Error(`${file}: cache ended early`);
        have += n;
      }
    };
    for (let i = 0; i < footer.groups; i++) {
      fill(4);
      const len = buf.readUInt32LE(at);
      at += 4;
      fill(len);
      const rec = deserialize(buf.subarray(at, at + len)) as CachedRecord;
      at += len;
      yield toGroup(rec);
    }
  } finally {
    closeSync(fd);
  }
}

/** One group read at random (by its index in the run's order): the footer's offsets. */
export function readCachedGroup(file: string, footer: Footer, i: number): Group & { prepared?: PreparedGroup } {
  const fd = openSync(file, 'r');
  try {
    const lb = Buffer.alloc(4);
    readSync(fd, lb, 0, 4, footer.offsets[i]);
    const b = Buffer.alloc(lb.readUInt32LE(0));
    readSync(fd, b, 0, b.length, footer.offsets[i] + 4);
    return toGroup(deserialize(b) as CachedRecord);
  } finally {
    closeSync(fd);
  }
}

/** Writes a run's cache as its groups are read; `commit` renames it into place. */
export class CacheWriter {
  private fd: number;
  private readonly tmp: string;
  private pos = MAGIC.length;
  private readonly h = createHash('sha1');
  private readonly offsets: number[] = [];
  private rollouts = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;

  constructor(
    private readonly file: string,
    private readonly key: string,
    private readonly run: string,
  ) {
    mkdirSync(join(file, '..'), { recursive: true });
    this.tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    this.fd = openSync(this.tmp, 'w', 0o600);
    writeSync(this.fd, MAGIC);
  }

  /** Appends one group (its entry and prepared features); null features: the cache will not be committed. */
  add(e: GroupEntry, prepared: PreparedGroup | null | undefined): void {
    if (!prepared) this.failed = true;
    if (this.failed) return;
    const { version: _v, ...entry } = e;
    const { sources: _s, ...p } = prepared!;
    const body = serialize({ e: entry, p } satisfies CachedRecord);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.length, 0);
    this.offsets.push(this.pos);
    this.h.update(len).update(body);
    this.push(len);
    this.push(body);
    this.pos += 4 + body.length;
    this.rollouts += e.n;
  }

  private push(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (!this.pendingBytes) return;
    writeSync(this.fd, Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Don't keep this cache (a read error, a group not prepared). */
  abandon(): void {
    this.failed = true;
  }

  /** Writes the footer and renames the cache into place, unless abandoned; always closes. Returns the bytes written, or 0. */
  commit(files: FileIdentity[], notices: Notice[]): number {
    try {
      if (this.failed) return 0;
      this.flush();
      const footer: Footer = { format: CACHE_FORMAT, key: this.key, run: this.run, files, notices, groups: this.offsets.length, rollouts: this.rollouts, offsets: this.offsets, end: this.pos, sha1: this.h.digest('hex') };
      const fb = Buffer.from(JSON.stringify(footer), 'utf8');
      const t = Buffer.alloc(4);
      t.writeUInt32LE(fb.length, 0);
      writeSync(this.fd, Buffer.concat([fb, t, TRAILER]));
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      renameSync(this.tmp, this.file);
      return this.pos + fb.length + 12;
    } finally {
      if (this.fd >= 0) closeSync(this.fd);
      rmSync(this.tmp, { force: true });
    }
  }
}

export { fileIdentity, type FileIdentity };
