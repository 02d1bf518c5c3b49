// The persisted index of a followed run (the extension's): what RunIndex knows of each file and the
// assembler's groups and state, saved outside the run folder so that a second open of an unchanged
// run reads this file instead of the logs, and an appended file is read from where it stopped.
//
// Validity: the same rules as the CLI's run cache (../cache/run-cache.ts): the cache format
// (CACHE_FORMAT), a key from the run's path and reading options (`cacheKey`), a SHA-1 of every byte,
// and each log file's identity (../cache/identity.ts). A file is trusted when its identity is the one
// saved, or when it is that file appended to (same device and inode, the saved bytes' head and last
// 64 KiB hash as saved); any other file (truncated, replaced, rewritten) is read again from scratch,
// its groups dropped and read anew with new versions. A deleted file's groups are dropped. A file
// that is not ours, of another format or key, truncated or whose bytes do not hash to its trailer is
// never trusted: the run is read from its logs and the file rewritten.
//
// Format, for the access pattern (written whole from time to time, read back whole in order at
// open, on the extension host): one header record (the files' identities and reading state, the
// assembler's state, the notices to replay), then the groups in chunks of CHUNK, each a V8
// structured-clone record (the chunk's packed columns in one typed array, raw bytes), so that writing and reading yield to the
// event loop between chunks; then a trailer (SHA-1, chunk count, magic). Texts are never stored.
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { errnoCode, errorMessage } from '../../util/errors';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { CACHE_FORMAT } from '../cache/run-cache.js';
import { fileIdentity, sameIdentity, type FileIdentity } from '../cache/identity.js';
import type { AssemblerState } from '../assemble.js';
import type { GroupEntry } from '../entries.js';
import type { ParserState } from '../parse.js';
import type { GroupKey, Notice } from '../types.js';
import type { FileState } from './files.js';

const MAGIC = Buffer.from('CLINDEX\u0002', 'latin1');
const TRAILER = Buffer.from('CLIFOOT\u0001', 'latin1');
/** Groups per record: one record's (de)serialisation is about a millisecond of the host's time. */
const CHUNK = 64;
/** Longest stretch of work between two yields to the event loop (ms). */
const SLICE_MS = 8;

/** A file's reading state as saved (its parser as plain data). */
export type SavedFileState = Omit<FileState, 'parser'> & { parser?: ParserState };

export interface SavedFile {
  identity: FileIdentity;
  state: SavedFileState;
}

export interface IndexHeader {
  format: number;
  key: string;
  files: SavedFile[];
  asm: AssemblerState;
  notices: Notice[];
  /** Problems already reported once for the run (parse.ts). */
  runOnce: string[];
  /** What the per-group extras were computed for (e.g. the scoring settings of the explorer's summaries). */
  extraTag: string | null;
  groups: number;
}

export interface SavedIndex {
  header: IndexHeader;
  entries: GroupEntry[];
  /** Per-group data saved beside the groups (same order); undefined where none. */
  extras: unknown[];
}

interface Chunk {
  e: Array<Omit<GroupEntry, 'version'>>;
  x: unknown[];
  /**
   * The packed columns (mean log-prob, reward, sample_idx) of the chunk's groups end to end: one
   * typed array per record instead of three per group (Node decodes each typed array through a
   * JavaScript callback; one per group is most of a record's decoding time). In the entries each
   * column is then its [start, length] in `cols`.
   */
  cols: Float64Array;
}

type Span = [number, number];
const COLUMNS = ['ml', 'rw', 'si'] as const;

/** The entries of a chunk with their packed columns moved into one array. */
function packChunk(entries: GroupEntry[], extraOf?: (e: GroupEntry) => unknown): Chunk {
  let total = 0;
  for (const e of entries) if (e.packed) for (const c of COLUMNS) total += e.packed[c]?.length ?? 0;
  const cols = new Float64Array(total);
  let at = 0;
  const c: Chunk = { e: [], x: [], cols };
  for (const e of entries) {
    const { version: _v, ...rest } = e;
    if (e.packed) {
      const p: Record<string, unknown> = { ...e.packed };
      for (const k of COLUMNS) {
        const a = e.packed[k];
        if (!a) continue;
        cols.set(a, at);
        p[k] = [at, a.length] satisfies Span;
        at += a.length;
      }
      rest.packed = p as unknown as GroupEntry['packed'];
    }
    c.e.push(rest);
    c.x.push(extraOf?.(e));
  }
  return c;
}

/** A chunk's entry (decoded, changed in place) with its columns back in typed arrays of their own (a worker thread gets a group's numbers, not the chunk's). */
function unpackEntry(e: Omit<GroupEntry, 'version'>, cols: Float64Array): GroupEntry {
  const out = e as GroupEntry;
  out.version = 0;
  const p = e.packed as unknown as Record<string, unknown> | undefined;
  if (p) {
    for (const k of COLUMNS) {
      const span = p[k] as Span | null;
      if (!span) continue;
      if (!Array.isArray(span) || span[0] < 0 || span[0] + span[1] > cols.length) throw new Error('a column outside its record');
      p[k] = cols.slice(span[0], span[0] + span[1]);
    }
  }
  return out;
}

const pause = async (t: { at: number }): Promise<void> => {
  if (performance.now() - t.at < SLICE_MS) return;
  await new Promise((r) => setImmediate(r));
  t.at = performance.now();
};

/** Writes `header` and the groups to `file` (a temporary file renamed into place). Returns its size. */
export async function writeIndex(file: string, header: Omit<IndexHeader, 'groups' | 'format'>, entries: GroupEntry[], extraOf?: (e: GroupEntry) => unknown): Promise<number> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  const h = createHash('sha1');
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (!pendingBytes) return;
    const b = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await fh.write(b);
    size += b.length;
  };
  const record = async (v: unknown) => {
    const body = serialize(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.length, 0);
    h.update(len).update(body);
    pending.push(len, body);
    pendingBytes += 4 + body.length;
    if (pendingBytes >= 1 << 22) await flush();
  };
  try {
    pending.push(MAGIC);
    pendingBytes += MAGIC.length;
    const t = { at: performance.now() };
    await record({ ...header, format: CACHE_FORMAT, groups: entries.length } satisfies IndexHeader);
    let chunks = 0;
    for (let i = 0; i < entries.length; i += CHUNK) {
      await record(packChunk(entries.slice(i, i + CHUNK), extraOf));
      chunks++;
      await pause(t);
    }
    const tail = Buffer.alloc(24);
    h.digest().copy(tail, 0);
    tail.writeUInt32LE(chunks, 20);
    pending.push(tail, TRAILER);
    pendingBytes += tail.length + TRAILER.length;
    await flush();
    await fh.sync();
    await fh.close();
    await rename(tmp, file);
    return size;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

export type ReadIndex = { ok: true; saved: SavedIndex } | { ok: false; why: string };

/** Reads and checks a saved index (its key, format and checksum), in slices. */
export async function readIndex(file: string, key: string): Promise<ReadIndex> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return { ok: false, why: 'none' };
  }
  try {
    const size = (await fh.stat()).size;
    const end = size - 24 - TRAILER.length;
    if (end < MAGIC.length) return { ok: false, why: 'truncated' };
    const trail = Buffer.alloc(24 + TRAILER.length);
    await fh.read(trail, 0, trail.length, end);
    const head = Buffer.alloc(MAGIC.length);
    await fh.read(head, 0, head.length, 0);
    if (!head.equals(MAGIC) || !trail.subarray(24).equals(TRAILER)) return { ok: false, why: 'not a consensus-lens index of this format' };
    const chunks = trail.readUInt32LE(20);
    const h: Hash = createHash('sha1');
    let buf = Buffer.alloc(1 << 22);
    let pos = MAGIC.length; // file position of buf[at]
    let have = 0;
    let at = 0;
    const next = async (): Promise<Buffer | undefined> => {
      const need = async (n: number): Promise<boolean> => {
        if (have - at >= n) return true;
        if (n > buf.length) {
          const nb = Buffer.alloc(Math.max(n, buf.length * 2));
          buf.copy(nb, 0, at, have);
          buf = nb;
        } else buf.copy(buf, 0, at, have);
        have -= at;
        at = 0;
        while (have < n) {
          const want = Math.min(buf.length - have, end - (pos + have));
          if (want <= 0) return false;
          const { bytesRead } = await fh.read(buf, have, want, pos + have);
          if (bytesRead <= 0) return false;
          have += bytesRead;
        }
        return true;
      };
      if (!(await need(4))) return undefined;
      const len = buf.readUInt32LE(at);
      if (!(await need(4 + len))) return undefined;
      h.update(buf.subarray(at, at + 4 + len));
      const body = buf.subarray(at + 4, at + 4 + len);
      at += 4 + len;
      pos += 4 + len;
      return body;
    };
    const t = { at: performance.now() };
    const hb = await next();
    if (!hb) return { ok: false, why: 'truncated' };
    let header: IndexHeader;
    try {
      header = deserialize(hb) as IndexHeader;
    } catch {
      return { ok: false, why: 'its header does not decode (corrupt)' };
    }
    if (header?.format !== CACHE_FORMAT || header.key !== key) return { ok: false, why: 'written for another run or format' };
    const entries: GroupEntry[] = [];
    const extras: unknown[] = [];
    for (let i = 0; i < chunks; i++) {
      const b = await next();
      if (!b) return { ok: false, why: 'truncated' };
      try {
        const c = deserialize(b) as Chunk;
        for (let j = 0; j < c.e.length; j++) {
          entries.push(unpackEntry(c.e[j], c.cols));
          extras.push(c.x[j]);
        }
      } catch {
        return { ok: false, why: 'a record does not decode (corrupt)' };
      }
      await pause(t);
    }
    if (pos !== end || !h.digest().equals(trail.subarray(0, 20))) return { ok: false, why: 'its records do not match their checksum (corrupt)' };
    if (entries.length !== header.groups) return { ok: false, why: 'its group count does not match (corrupt)' };
    return { ok: true, saved: { header, entries, extras } };
  } catch (err) {
    return { ok: false, why: `unreadable (${errnoCode(err) ?? errorMessage(err)})` };
  } finally {
    await fh.close();
  }
}

/** How a saved file stands now: 'same' (its identity), 'appended' (its saved bytes are a prefix of the file) or 'changed'. */
export function savedFileNow(saved: FileIdentity): 'same' | 'appended' | 'changed' {
  let now: FileIdentity;
  try {
    now = fileIdentity(saved.path);
  } catch {
    return 'changed';
  }
  if (sameIdentity(now, saved)) return 'same';
  if (now.dev !== saved.dev || now.ino !== saved.ino || now.size <= saved.size) return 'changed';
  // the identity's hashes of the file as it was, recomputed on today's bytes
  const then = fileIdentity(saved.path, saved.size);
  return then.head === saved.head && then.tail === saved.tail ? 'appended' : 'changed';
}

export type { GroupKey };
