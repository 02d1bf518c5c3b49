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
// Format, for the access pattern (written once by appending; read back whole in order, one group
// at a time, or — a run-wide re-score — one pass over every group's features, once per setting):
// a sequence of records, one per group in the run's order, each its features in a fixed binary
// layout read as typed-array views (record.ts: no per-roll-out object is built to score a group)
// and its index entry, decoded only when the roll-outs are wanted; then a JSON footer (the files'
// identities, the run's notices to replay, the offset of every record for random reads of one
// group, the SHA-1 of the records), the footer's own SHA-1, and a fixed trailer. A cache is
// trusted only whole: records and footer under their checksums, and every record decoding (a
// record that does not decode is a checksum error like any other: the file is dropped and
// rebuilt, one notice). See ARCHITECTURE.md (Decisions) for why not JSON lines or SQLite.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, rmSync, writeSync, mkdirSync, fstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { PreparedGroup } from '../../engine';
import type { Group } from '../../engine';
import type { GroupEntry } from '../entries.js';
import { entryToGroup, rolloutsOf } from '../entries.js';
import type { GroupKey, Notice } from '../log-types.js';
import type { FileReadState } from '../read-run.js';
import { fileIdentity, sameIdentity, type FileIdentity } from './identity.js';
import { decodeEntry, decodeFeatures, encodeRecord, recordHeader } from './record.js';

/** Bump when the records' shape or anything prepareGroup computes changes. */
export const CACHE_FORMAT = 5; // 2: features in a binary record layout; 3: TRL tables joined with the consensus_lens.trl log of their run (src/logs/join.ts); 4: the footer under its own SHA-1, the ground truth's forms and whether it may be the vote (PreparedGroup.truthMayBeVote); 5: the label-free operators' inputs (self-certainty, entropy, novelty features) in the record's meta, the roll-outs' confidences in the index entries
const MAGIC = Buffer.from('CLCACHE\u0001', 'latin1');
const TRAILER = Buffer.from('CLCFOOT\u0001', 'latin1');
/** After the footer: its SHA-1 (20 bytes), its length (4), TRAILER (8). */
const TAIL = 20 + 4 + TRAILER.length;

export interface Footer {
  format: number;
  key: string;
  run: string;
  files: FileIdentity[];
  notices: Notice[];
  /** Lines of the run's files read, and skipped (malformed or rejected), when the cache was written. */
  stats: { lines: number; skipped: number };
  groups: number;
  rollouts: number;
  /** Byte offset of each record (after MAGIC). */
  offsets: number[];
  /** Each group's key (src/logs/log-types.ts groupKey), in the run's order: an appended line naming one of them means the run is read again. */
  keys: GroupKey[];
  /** Where the read of each file stopped (files[i]): an appended file is read on from there. */
  reads: (FileReadState | null)[];
  /** End of the records. */
  end: number;
  /** The records in segments (the first write, then each extension), each with its SHA-1. */
  segments: { end: number; sha1: string }[];
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

/** `footer` with 'stale': a whole cache of other files (maybe the same files, one of them appended to). */
export type CacheCheck = { ok: true; footer: Footer } | { ok: false; why: string; footer?: Footer };

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
    const tail = Buffer.alloc(TAIL);
    if (size < MAGIC.length + tail.length) return { ok: false, why: 'truncated' };
    readSync(fd, tail, 0, TAIL, size - TAIL);
    const head = Buffer.alloc(MAGIC.length);
    readSync(fd, head, 0, head.length, 0);
    if (!head.equals(MAGIC) || !tail.subarray(24).equals(TRAILER)) return { ok: false, why: 'not a consensus-lens cache of this format' };
    const flen = tail.readUInt32LE(20);
    if (flen > size - TAIL - MAGIC.length) return { ok: false, why: 'truncated' };
    const fbuf = Buffer.alloc(flen);
    readSync(fd, fbuf, 0, flen, size - TAIL - flen);
    // the footer (offsets, keys, notices, files) under its own checksum
    if (!createHash('sha1').update(fbuf).digest().equals(tail.subarray(0, 20))) return { ok: false, why: 'its footer does not match its checksum (corrupt)' };
    let footer: Footer;
    try {
      footer = JSON.parse(fbuf.toString('utf8')) as Footer;
    } catch {
      return { ok: false, why: 'its footer is not JSON' };
    }
    if (footer.format !== CACHE_FORMAT || footer.key !== key) return { ok: false, why: 'written for another run or format' };
    const shaped =
      footer.end === size - TAIL - flen &&
      footer.stats &&
      Array.isArray(footer.offsets) &&
      footer.offsets.length === footer.groups &&
      Array.isArray(footer.keys) &&
      footer.keys.length === footer.groups &&
      Array.isArray(footer.reads) &&
      Array.isArray(footer.files) &&
      footer.reads.length === footer.files.length &&
      Array.isArray(footer.segments) &&
      footer.segments.at(-1)?.end === footer.end;
    if (!shaped) return { ok: false, why: 'its footer does not match its size' };
    // the records hash to the footer's SHA-1s (a flipped byte is a rebuild, never a wrong number)
    const buf = Buffer.alloc(1 << 20);
    let pos = MAGIC.length;
    for (const seg of footer.segments) {
      const h = createHash('sha1');
      while (pos < seg.end) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, seg.end - pos), pos);
        if (n <= 0) return { ok: false, why: 'truncated' };
        h.update(buf.subarray(0, n));
        pos += n;
      }
      if (h.digest('hex') !== seg.sha1) return { ok: false, why: 'its records do not match their checksum (corrupt)' };
    }
    const bad = undecodable(file, footer);
    if (bad) return { ok: false, why: `its records do not decode (${bad}; corrupt)` };
    if (!sameFiles(footer.files, files)) return { ok: false, why: 'stale', footer };
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

/**
 * Why the records of a checksummed cache do not decode (undefined when they all do): each record
 * starts at its footer offset, and its entry and features decode. A cache written by another
 * build, or crafted, can pass its checksums and still not decode: never replayed then.
 */
function undecodable(file: string, footer: Footer): string | undefined {
  let reader: RecordReader | undefined;
  let i = 0;
  try {
    reader = new RecordReader(file, undefined, footer.end);
    let pos = MAGIC.length;
    for (let r = reader.next(); r; r = reader.next(), i++) {
      if (footer.offsets[i] !== pos) return `record ${i + 1} is not where the footer says`;
      pos += r.length;
      const rec = r.buf.slice(r.at, r.at + r.length);
      toGroup(rec);
    }
    if (i !== footer.groups) return `${i} records for ${footer.groups} groups`;
    return undefined;
  } catch (e) {
    return `record ${i + 1}: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    reader?.close();
  }
}

/** The engine's Group of a cached record, texts empty and `prepared` attached (its sources from the entry). */
function toGroup(rec: Uint8Array): Group & { prepared?: PreparedGroup } {
  const e = decodeEntry(rec);
  const rollouts = rolloutsOf(e);
  const g: Group & { prepared?: PreparedGroup } = entryToGroup(e, rollouts.map(() => ''), rollouts);
  const { prepared } = decodeFeatures(rec);
  prepared.sources = rollouts.map((x) => x.source);
  g.prepared = prepared;
  return g;
}

/**
 * Reads a checked cache file's records in order, from byte `from` to `to` (record boundaries;
 * default: all of them). `next` gives the next record as a view of the reader's buffer, valid until
 * the following call: a caller that keeps a record copies it.
 */
export class RecordReader {
  private buf = new Uint8Array(1 << 22);
  /** File position of buf[0] (a multiple of 8, as every record's start). */
  private start: number;
  private have = 0;
  private at = 0;
  private readonly fd: number;
  /** Bytes read from the file. */
  bytesRead = 0;

  constructor(
    private readonly file: string,
    from: number | undefined,
    private readonly to: number,
  ) {
    this.start = from ?? MAGIC.length;
    this.fd = openSync(file, 'r');
  }

  private fill(need: number): void {
    if (this.at + need <= this.have) return;
    const keep = this.have - this.at;
    if (need > this.buf.length) {
      const nb = new Uint8Array(Math.max(need, this.buf.length * 2));
      nb.set(this.buf.subarray(this.at, this.have));
      this.buf = nb;
    } else this.buf.copyWithin(0, this.at, this.have);
    this.start += this.at;
    this.at = 0;
    this.have = keep;
    while (this.have < need) {
      const n = readSync(this.fd, this.buf, this.have, Math.min(this.buf.length - this.have, this.to - (this.start + this.have)), this.start + this.have);
      if (n <= 0) throw new Error(`${this.file}: cache ended early`);
      this.have += n;
      this.bytesRead += n;
    }
  }

  /** The next record (its bytes are `buf[at … at + length]`), or undefined at the end. */
  next(): { buf: Uint8Array; at: number; length: number; qhash: number } | undefined {
    if (this.start + this.at >= this.to) return undefined;
    this.fill(8);
    const { length, qhash } = recordHeader(this.buf, this.at);
    if (length < 8 || length % 8 !== 0) throw new Error(`${this.file}: bad cache record`);
    this.fill(length);
    const r = { buf: this.buf, at: this.at, length, qhash };
    this.at += length;
    return r;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The cached groups in the run's order (the file was checked by `checkCache`). */
export function* replayCache(file: string, footer: Footer): Generator<Group & { prepared?: PreparedGroup }> {
  const reader = new RecordReader(file, undefined, footer.end);
  try {
    for (let r = reader.next(); r; r = reader.next()) yield toGroup(r.buf.slice(r.at, r.at + r.length));
  } finally {
    reader.close();
  }
}

/** One group read at random (by its index in the run's order): the footer's offsets. */
export function readCachedGroup(file: string, footer: Footer, i: number): Group & { prepared?: PreparedGroup } {
  const fd = openSync(file, 'r');
  try {
    const lb = Buffer.alloc(4);
    readSync(fd, lb, 0, 4, footer.offsets[i]);
    const b = new Uint8Array(lb.readUInt32LE(0));
    readSync(fd, b, 0, b.length, footer.offsets[i]);
    return toGroup(b);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a run's cache as its groups are read; `commit` renames it into place. With `base` (a
 * checked cache of the same run whose last file was appended to) it writes only the new groups,
 * and `commit` appends them to that cache file as a new segment, with a new footer.
 */
export class CacheWriter {
  private fd: number;
  private readonly tmp: string;
  private pos: number;
  private readonly h = createHash('sha1');
  private readonly offsets: number[];
  private readonly keys: GroupKey[];
  private rollouts: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;
  /** Where each file's read stopped, as readRun reports it. */
  private readonly reads = new Map<string, FileReadState>();

  constructor(
    private readonly file: string,
    private readonly key: string,
    private readonly run: string,
    private readonly base?: Footer,
  ) {
    mkdirSync(join(file, '..'), { recursive: true });
    this.tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    this.fd = openSync(this.tmp, 'w', 0o600);
    if (!base) writeSync(this.fd, MAGIC);
    this.pos = base ? base.end : MAGIC.length;
    this.offsets = base ? [...base.offsets] : [];
    this.keys = base ? [...base.keys] : [];
    this.rollouts = base?.rollouts ?? 0;
    if (base) base.files.forEach((f, i) => base.reads[i] && this.reads.set(f.path, base.reads[i]!));
  }

  /** A file's read ended here (ReadRunOptions.onFileRead). */
  fileRead(s: FileReadState): void {
    this.reads.set(s.file, s);
  }

  /** Appends one group (its entry and prepared features); null features: the cache will not be committed. */
  add(e: GroupEntry, prepared: PreparedGroup | null | undefined): void {
    if (!prepared) this.failed = true;
    if (this.failed) return;
    const { version: _v, ...entry } = e;
    const body = encodeRecord(entry, prepared!);
    this.offsets.push(this.pos);
    this.keys.push(e.key);
    this.h.update(body);
    this.push(body);
    this.pos += body.length;
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

  /**
   * Writes the footer and puts the cache in place, unless abandoned; always closes. Returns the
   * footer, or undefined. `notices` and `stats`: this read's (an extension adds them to the base's).
   */
  commit(files: FileIdentity[], notices: Notice[], stats: Footer['stats']): Footer | undefined {
    try {
      if (this.failed) return undefined;
      this.flush();
      const base = this.base;
      const segments = [...(base?.segments ?? []), { end: this.pos, sha1: this.h.digest('hex') }];
      const footer: Footer = {
        format: CACHE_FORMAT,
        key: this.key,
        run: this.run,
        files,
        notices: [...(base?.notices ?? []), ...notices],
        stats: { lines: (base?.stats.lines ?? 0) + stats.lines, skipped: (base?.stats.skipped ?? 0) + stats.skipped },
        groups: this.offsets.length,
        rollouts: this.rollouts,
        offsets: this.offsets,
        keys: this.keys,
        reads: files.map((f) => this.reads.get(f.path) ?? null),
        end: this.pos,
        segments,
      };
      const fb = Buffer.from(JSON.stringify(footer), 'utf8');
      const t = Buffer.alloc(4);
      t.writeUInt32LE(fb.length, 0);
      const tail = Buffer.concat([fb, createHash('sha1').update(fb).digest(), t, TRAILER]);
      if (!base) {
        writeSync(this.fd, tail);
        fsyncSync(this.fd);
        closeSync(this.fd);
        this.fd = -1;
        renameSync(this.tmp, this.file);
        return footer;
      }
      // An extension: the new records go where the old footer was, then the new footer. A crash
      // half-way leaves a cache whose footer is missing or does not hash: rebuilt, never trusted.
      closeSync(this.fd);
      this.fd = -1;
      const src = openSync(this.tmp, 'r');
      const dst = openSync(this.file, 'r+');
      try {
        const buf = Buffer.alloc(1 << 20);
        let at = base.end;
        for (let n = readSync(src, buf, 0, buf.length, null); n > 0; n = readSync(src, buf, 0, buf.length, null)) {
          writeSync(dst, buf, 0, n, at);
          at += n;
        }
        writeSync(dst, tail, 0, tail.length, at);
        ftruncateSync(dst, at + tail.length);
        fsyncSync(dst);
      } finally {
        closeSync(src);
        closeSync(dst);
      }
      return footer;
    } finally {
      if (this.fd >= 0) closeSync(this.fd);
      rmSync(this.tmp, { force: true });
    }
  }
}

export { fileIdentity, type FileIdentity };
