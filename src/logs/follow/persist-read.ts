// Reads the persisted index of a followed run back (the format: persist.ts): at open the header,
// the table and the light records, checked; later, a cold group's heavy record, read, checked
// against its SHA-1 and decoded only when one of its groups is needed (`ColdFile`).
import { createHash } from 'node:crypto';
import { errnoCode, errorMessage } from '../../util/errors';
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { deserialize } from 'node:v8';
import { CACHE_FORMAT } from '../cache/run-cache.js';
import type { GroupEntry } from '../entries.js';
import { eachHead } from './heads.js';
import type { GroupKey } from '../log-types.js';
import { TimeSlice } from '../../util/slice';
import { CHUNK, MAGIC, TAIL, TRAILER, unpackEntry, type Chunk, type IndexHeader, type LightChunk, type Table } from './persist.js';

export interface SavedIndex {
  header: IndexHeader;
  /** Per-group data saved beside the groups, in its light form (in the groups' order); undefined where none. */
  extras: unknown[];
  /** The run-level data saved with it. */
  runExtra: unknown;
  /** The heavy records, open until the index closes (`ColdFile.close`). */
  cold: ColdFile;
}

/**
 * The heavy records of an open saved index: a cold group's full entry and extra, read back on
 * demand (synchronously: one record is ~100 KB, a fraction of a millisecond from the page cache)
 * and checked against the record's SHA-1. The file stays open while the index lives, so a later
 * save (a new file renamed over it) does not change what is read.
 */
export class ColdFile {
  private readonly recent = new Map<number, { entries: Map<GroupKey, GroupEntry>; extras: Map<GroupKey, unknown> }>();
  private fd: number | null;

  constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    private readonly table: Table,
    private readonly chunks: number,
    /** How many groups it holds, and the tag their extras were saved under. */
    readonly groups: number,
    readonly tag: string | null,
    /** The header's files, in order (a light record names them by index). */
    readonly files: readonly string[],
  ) {
    this.fd = fh.fd;
  }

  /** How many groups heavy record `chunk` holds (CHUNK but for the last). */
  groupsIn(chunk: number): number {
    if (!(chunk >= 0 && chunk < this.chunks)) return -1;
    return chunk < this.chunks - 1 ? CHUNK : this.groups - CHUNK * (this.chunks - 1);
  }

  /** The byte length of heavy (or light) record `chunk`, -1 when there is none. */
  recordLength(chunk: number, light: boolean): number {
    if (this.fd === null || !(chunk >= 0 && chunk < this.chunks)) return -1;
    return this.table.spans[4 * chunk + (light ? 3 : 1)];
  }

  /**
   * Reads heavy (or light) record `chunk` as it is on disk (its length prefix and body) into `buf`
   * at `at`, and gives its SHA-1 from the table: what a save copies. Not checked here (a save part
   * way through a huge open copies most of the run each time): the copy keeps the table's SHA-1,
   * so a record damaged on disk still fails the read that uses it, as it would have in the old
   * file. Null when it cannot be read.
   */
  readRecord(chunk: number, light: boolean, buf: Buffer, at: number): Uint8Array | null {
    const len = this.recordLength(chunk, light);
    if (len < 0 || at + len > buf.length) return null;
    try {
      if (readSync(this.fd!, buf, at, len, this.table.spans[4 * chunk + (light ? 2 : 0)]) !== len) return null;
    } catch {
      return null;
    }
    const r = light ? this.chunks + chunk : chunk;
    return this.table.hashes.slice(20 * r, 20 * r + 20);
  }

  /** The full entry and saved extra of a cold group (its version is the caller's to set). */
  load(key: GroupKey, chunk: number): { entry: GroupEntry; extra: unknown } {
    let c = this.recent.get(chunk);
    if (c) {
      this.recent.delete(chunk);
      this.recent.set(chunk, c);
    } else {
      c = this.read(chunk);
      this.recent.set(chunk, c);
      while (this.recent.size > RECENT_CHUNKS) this.recent.delete(this.recent.keys().next().value as number);
    }
    const entry = c.entries.get(key);
    if (!entry) throw new Error(`${this.path}: group ${key} is not in its saved record (corrupt index)`);
    // a copy per caller: the record's decoded entries stay as saved
    return { entry: { ...entry }, extra: c.extras.get(key) };
  }

  private read(chunk: number): { entries: Map<GroupKey, GroupEntry>; extras: Map<GroupKey, unknown> } {
    if (this.fd === null) throw new Error(`${this.path}: the saved index is closed`);
    if (!(chunk >= 0 && chunk < this.chunks)) throw new Error(`${this.path}: no saved record ${chunk} (corrupt index)`);
    const at = this.table.spans[4 * chunk];
    const len = this.table.spans[4 * chunk + 1];
    const buf = Buffer.allocUnsafe(len);
    if (readSync(this.fd, buf, 0, len, at) !== len) throw new Error(`${this.path}: a saved record is cut short (the file changed)`);
    if (!createHash('sha1').update(buf).digest().equals(this.table.hashes.subarray(20 * chunk, 20 * chunk + 20))) throw new Error(`${this.path}: a saved record does not match its checksum (corrupt index)`);
    const c = deserialize(buf.subarray(4)) as Chunk;
    const entries = new Map<GroupKey, GroupEntry>();
    const extras = new Map<GroupKey, unknown>();
    for (let j = 0; j < c.e.length; j++) {
      const e = unpackEntry(c.e[j], c.cols);
      entries.set(e.key, e);
      extras.set(e.key, c.x[j]);
    }
    return { entries, extras };
  }

  close(): void {
    if (this.fd !== null) void this.fh.close().catch(() => undefined);
    this.fd = null;
    this.recent.clear();
  }
}

/** Decoded heavy records kept (a step's questions are in one or two). */
const RECENT_CHUNKS = 16;

export type ReadIndex = { ok: true; saved: SavedIndex } | { ok: false; why: string };

/**
 * Where `readIndex` puts each group's head (cold: its roll-outs are read back from `cold`), in
 * order, as its record is checked and decoded, with the size the assembler counted it with (NaN:
 * not counted; `header.asm.countedSize` is then empty). One head at a time, not an array of every
 * head: a huge run's heads as objects all at once are the largest part of an open's heap; and the
 * head object may be reused for the next one (heads.ts `eachHead`): the sink copies what it keeps.
 * Whatever it kept is not to be trusted when the read fails.
 */
export interface HeadSink {
  /** How many heads will come (called once, before the first). */
  expect(groups: number): void;
  head(head: GroupEntry, counted: number): void;
}

/**
 * Reads and checks a saved index's header, table and light records, in slices; the heavy records
 * stay on disk (`ColdFile`). `lightIn`: applied to each light extra as it is decoded (its result is
 * what `extras` holds). `unpack`: a record's packed light forms (`SaveSource.lightPack`) → what
 * `extras` holds for each of its groups; a record packed and no `unpack` given does not decode.
 */
export async function readIndex(file: string, key: string, sink: HeadSink, lightIn?: (x: unknown) => unknown, unpack?: (p: unknown) => unknown[]): Promise<ReadIndex> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return { ok: false, why: 'none' };
  }
  let keep = false;
  try {
    const size = (await fh.stat()).size;
    const end = size - TAIL - TRAILER.length;
    if (end < MAGIC.length) return { ok: false, why: 'truncated' };
    const trail = Buffer.alloc(TAIL + TRAILER.length);
    await fh.read(trail, 0, trail.length, end);
    const head = Buffer.alloc(MAGIC.length);
    await fh.read(head, 0, head.length, 0);
    if (!head.equals(MAGIC) || !trail.subarray(TAIL).equals(TRAILER)) return { ok: false, why: 'not a consensus-lens index of this format' };
    const tableAt = trail.readDoubleLE(0);
    const tableLen = trail.readUInt32LE(8);
    const headerLen = trail.readUInt32LE(12);
    if (!(tableAt >= MAGIC.length + headerLen && tableAt + tableLen === end && headerLen >= 4)) return { ok: false, why: 'truncated' };
    const readAt = async (at: number, len: number): Promise<Buffer> => {
      const b = Buffer.allocUnsafe(len);
      const { bytesRead } = await fh.read(b, 0, len, at);
      if (bytesRead !== len) throw new Error('cut short');
      return b;
    };
    const hb = await readAt(MAGIC.length, headerLen);
    const tb = await readAt(tableAt, tableLen);
    const sha = (b: Buffer) => createHash('sha1').update(b).digest();
    if (!createHash('sha1').update(sha(hb)).update(sha(tb)).digest().equals(trail.subarray(16, 36))) return { ok: false, why: 'its header or table does not match its checksum (corrupt)' };
    let header: IndexHeader;
    let table: Table;
    try {
      header = deserialize(hb.subarray(4)) as IndexHeader;
      table = deserialize(tb.subarray(4)) as Table;
    } catch {
      return { ok: false, why: 'its header does not decode (corrupt)' };
    }
    if (header?.format !== CACHE_FORMAT || header.key !== key) return { ok: false, why: 'written for another run or format' };
    const chunks = Math.ceil(header.groups / CHUNK);
    if (!(table.spans instanceof Float64Array) || table.spans.length !== 4 * chunks || !(table.hashes instanceof Uint8Array) || table.hashes.length !== 40 * chunks) return { ok: false, why: 'its table does not match its group count (corrupt)' };
    let groups = 0;
    const extras: unknown[] = [];
    sink.expect(header.groups);
    // the assembler's per-group state, back into its snapshot's shape
    const fileIndex = new Map(header.asm.files.map(([f], i) => [f, i]));
    const fileKeys: GroupKey[][] = header.asm.files.map(() => []);
    // the light records are contiguous: read in large blocks, checked one by one
    const first = chunks ? table.spans[2] : tableAt;
    // One string per distinct value, not one per group (a decoded record makes a string of every
    // value; a run repeats its file names, formats, regimes, labels and question ids a lot).
    const strings = new Map<string, string>();
    const intern = (x: string): string => {
      const known = strings.get(x);
      if (known !== undefined) return known;
      if (strings.size < 1 << 20) strings.set(x, x);
      return x;
    };
    const internAll = (o: Record<string, unknown>, depth: number): void => {
      for (const k in o) {
        const v = o[k];
        if (typeof v === 'string') o[k] = intern(v);
        else if (depth > 0 && v && typeof v === 'object') internAll(v as Record<string, unknown>, depth - 1);
      }
    };
    // A head's strings that a run repeats (a question comes back every step); not its key, which
    // is its own and would only grow the map.
    const internHead = (h: GroupEntry): void => {
      h.questionId = intern(h.questionId);
      h.format = intern(h.format) as GroupEntry['format'];
      h.origin = intern(h.origin) as GroupEntry['origin'];
      h.firstSource.file = intern(h.firstSource.file);
      if (typeof h.groundTruth === 'string') h.groundTruth = intern(h.groundTruth);
      if (h.run !== undefined) h.run = intern(h.run);
      if (h.framework !== undefined) h.framework = intern(h.framework) as GroupEntry['framework'];
      if (h.stream !== undefined) h.stream = intern(h.stream) as GroupEntry['stream'];
    };
    const slice = new TimeSlice();
    let block: Buffer = Buffer.alloc(0);
    let blockAt = first;
    for (let c = 0; c < chunks; c++) {
      const at = table.spans[4 * c + 2];
      const len = table.spans[4 * c + 3];
      if (at < blockAt || at + len > blockAt + block.length) {
        blockAt = at;
        block = await readAt(at, Math.min(Math.max(len, 1 << 22), tableAt - at));
      }
      const b = block.subarray(at - blockAt, at - blockAt + len);
      if (!sha(b).equals(table.hashes.subarray(20 * (chunks + c), 20 * (chunks + c) + 20))) return { ok: false, why: 'its records do not match their checksum (corrupt)' };
      try {
        const l = deserialize(b.subarray(4)) as LightChunk;
        const count = l.hp ? (Array.isArray(l.hp.keys) ? l.hp.keys.length : -1) : Array.isArray(l.h) ? l.h.length : -1;
        const packed = l.p !== undefined;
        const xs = packed ? unpack?.(l.p) : l.x;
        if (count < 0 || !Array.isArray(xs) || xs.length !== count || !Array.isArray(l.a) || l.a.length !== count) throw new Error('light forms that do not match the heads');
        // `h` may be an object reused for the next head (eachHead): read now, nothing of it kept
        const each = (h: GroupEntry, j: number): void => {
          const f = h.firstSource.file;
          let x = xs[j]; // unpacked: already what its owner keeps
          if (!packed && x !== undefined && lightIn) x = lightIn(x);
          else if (!packed && x && typeof x === 'object') internAll(x as Record<string, unknown>, 2);
          extras.push(x);
          const a = l.a[j];
          const cs = typeof a === 'number' ? a : a ? a[0] : null;
          groups++;
          sink.head(h, cs ?? Number.NaN);
          const fk = Array.isArray(a) ? a[1] : [fileIndex.get(f)];
          for (const i of fk) {
            if (i === undefined || !fileKeys[i]) throw new Error('a group fed by a file not saved');
            fileKeys[i].push(h.key);
          }
        };
        if (l.hp) eachHead(l.hp, c, intern, each);
        else
          (l.h as GroupEntry[]).forEach((h, j) => {
            if (h?.cold?.chunk !== c) throw new Error('a head outside its record');
            h.version = 0;
            internHead(h);
            each(h, j);
          });
      } catch {
        return { ok: false, why: 'a record does not decode (corrupt)' };
      }
      if (slice.due) await slice.next();
    }
    if (groups !== header.groups) return { ok: false, why: 'its group count does not match (corrupt)' };
    header.asm.files = header.asm.files.map(([f, , maxStep], i) => [f, fileKeys[i], maxStep]);
    header.asm.countedSize = [];
    const cold = new ColdFile(file, fh, table, chunks, header.groups, header.extraTag, header.asm.files.map(([f]) => f));
    keep = true;
    return { ok: true, saved: { header, extras, runExtra: table.runExtra, cold } };
  } catch (err) {
    return { ok: false, why: `unreadable (${errnoCode(err) ?? errorMessage(err)})` };
  } finally {
    if (!keep) await fh.close();
  }
}
