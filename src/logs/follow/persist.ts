// The persisted index of a followed run (the extension's): what RunIndex knows of each file and the
// assembler's groups and state, saved outside the run folder so that a second open of an unchanged
// run reads this file instead of the logs, and an appended file is read from where it stopped.
// Long file: one format — its writer, its reader and its on-demand record reads share the record
// layouts and checks below, and must change together.
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
// Format, for the access pattern (written whole from time to time — part way through a first open
// too, to bound what the host holds —; at open, only what the explorer needs is read; a group's
// roll-outs are read back when the group is opened, prepared or saved again): one header record (the files' identities and reading state, the assembler's state, the
// notices to replay); then the *heavy* records, the groups in chunks of CHUNK (entries with their
// roll-out columns in one typed array, and the full per-group extra); then one *light* record per
// chunk (each group's head — key, step, question, size, completeness, first source —, as columns:
// `packHeads`, and the light form of its extra, packed by its owner when it gives `lightPack`); then a table (every record's offset, length and SHA-1, and the run-level
// extra) and a fixed trailer (the table's place and the SHA-1 of header and table). At open the
// header, the table and the light records are read and checked; a heavy record is read, checked
// against its own SHA-1 and decoded only when one of its groups is needed (`ColdFile`), so the host
// holds a head per group, never the whole run. V8 structured clone throughout; texts never stored.
// A save copies each heavy record whose groups are all as saved in the file it replaces (same
// record, same extras: SAVED_EXTRA) byte for byte with its SHA-1, and its light record too when it
// keeps its number and the files theirs: saving again and again as a huge run is read costs what
// changed (and a copy of the bytes), not a decode and encode of the run.
import { createHash, randomBytes } from 'node:crypto';
import { errnoCode, errorMessage } from '../../util/errors';
import { readSync } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { CACHE_FORMAT } from '../cache/run-cache.js';
import { fileIdentity, sameIdentity, type FileIdentity } from '../cache/identity.js';
import type { AssemblerState } from '../assemble.js';
import type { GroupSlot } from '../group-table.js';
import { coldRef, confidentCount, type GroupEntry } from '../entries.js';
import { eachHead, packHeads, type PackedHeads } from './heads.js';
import type { ParserState } from '../parse.js';
import type { GroupKey, Notice } from '../log-types.js';
import type { FileState } from './files.js';
import { TimeSlice } from '../../util/slice';

const MAGIC = Buffer.from('CLINDEX\u0003', 'latin1');
const TRAILER = Buffer.from('CLIFOOT\u0001', 'latin1');
/** Groups per record: one record's (de)serialisation is about a millisecond of the host's time. */
export const CHUNK = 64;

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
  /** Per-group data saved beside the groups, in its light form (in the groups' order); undefined where none. */
  extras: unknown[];
  /** The run-level data saved with it. */
  runExtra: unknown;
  /** The heavy records, open until the index closes (`ColdFile.close`). */
  cold: ColdFile;
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

/**
 * A light record: the heads of one heavy record's groups, the light form of their extras, and
 * each group's part of the assembler's state (`PerGroup`), kept out of the header so that no one
 * record grows with the run (one decode of it would be one long task on the host).
 */
interface LightChunk {
  /** The heads, packed (`packHeads`); or, when one has a field the packing does not know, `h`. */
  hp?: PackedHeads;
  h?: Array<Omit<GroupEntry, 'version'>>;
  /** The extras' light forms, one per group; or, packed by their owner (`SaveSource.lightPack`), `p`. */
  x?: unknown[];
  p?: unknown;
  a: PerGroup[];
}

/**
 * A group's share of the assembler's state: the size it was counted with (`countedSize`) and the
 * files that fed it when not only the file of its first record (indexes into `asm.files`).
 */
type PerGroup = undefined | number | [number | null, number[]];

/** Where the records are, and what the run as a whole saved (see the header of this file). */
interface Table {
  /** Per heavy record: offset of its length prefix, its byte length (with the prefix), then the same for its light record. */
  spans: Float64Array;
  /** SHA-1 of each heavy record, then of each light record (20 bytes each). */
  hashes: Uint8Array;
  runExtra: unknown;
}

type Span = [number, number];
const COLUMNS = ['ml', 'rw', 'si'] as const;
/** The fields a head does not carry (they stay in the heavy record). */
const HEAVY_FIELDS: ReadonlySet<string> = new Set(['packed', 'list', 'prompt', 'groundTruthForms', 'loggedOperator', 'version', 'cold']);

/** The entries of a chunk with their packed columns moved into one array. */
function packChunk(entries: GroupEntry[], extras: unknown[]): Chunk {
  let total = 0;
  for (const e of entries) if (e.packed) for (const c of COLUMNS) total += e.packed[c]?.length ?? 0;
  const cols = new Float64Array(total);
  let at = 0;
  const c: Chunk = { e: [], x: extras, cols };
  for (const e of entries) {
    const { version: _v, cold: _c, ...rest } = e;
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
  }
  return c;
}

/** A group's head as saved: what every holder may read without its roll-outs (entries.ts GroupHead). */
function headOf(e: GroupEntry, chunk: number): Omit<GroupEntry, 'version'> {
  // Copied field by field, not spread and then deleted from: a delete turns an object into a
  // dictionary, ~3× the bytes, and a head per group is kept after every save.
  const h: Record<string, unknown> = {};
  for (const k in e) if (!HEAVY_FIELDS.has(k)) h[k] = e[k as keyof GroupEntry];
  h.cold = coldRef(chunk, confidentCount(e));
  return h as Omit<GroupEntry, 'version'>;
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

/**
 * What an owner's `extraOf` returns for a group whose extra is the one saved with it before (under
 * the same tag): a record whose groups are all cold and all say so is copied byte for byte from the
 * index being replaced, not read back and written again (a save part way through a huge first
 * open would otherwise rewrite everything saved so far, each time).
 */
export const SAVED_EXTRA: unique symbol = Symbol('the extra saved before');

/** What `writeIndex` saves per group and for the run. */
export interface SaveSource {
  /** How many groups, and each in order without building it (`GroupTable.slots`: its key, and the record of a complete cold head). */
  count: number;
  slots: Iterable<GroupSlot>;
  /** A group's head (or, in memory, the group), built when its record is written anew. */
  head: (key: GroupKey) => GroupEntry;
  /** A cold group's full entry (from the index being replaced). */
  load: (e: GroupEntry) => GroupEntry;
  /** The size the assembler counted a group with, when it keeps one (`GroupAssembler.countedSizeOf`). */
  countedOf: (key: GroupKey) => number | undefined;
  /** The extra saved before for a group restored and unchanged since (cold, or read back since). */
  savedExtra: (e: GroupEntry) => unknown;
  /** The extra to save for a group, or SAVED_EXTRA for the one saved with it before. */
  extraOf?: (e: GroupEntry) => unknown;
  /** Whether `extraOf` would give SAVED_EXTRA for a group, known without building it (false when unsure). */
  unchanged?: (key: GroupKey) => boolean;
  /** The light form of the extra saved with a group (for SAVED_EXTRA; without it no record is copied). */
  savedLight?: (e: GroupEntry) => unknown;
  /** The index being replaced (its cold groups' records; whole records are copied from it). */
  cold?: ColdFile;
  /** The light form of an extra, read at open with the heads. */
  lightOf?: (x: unknown) => unknown;
  /**
   * One record's light forms (undefined where a group has none) packed into one value, so that an
   * open decodes a few arrays per record rather than objects per group; `readIndex`'s `unpack`
   * undoes it.
   */
  lightPack?: (xs: unknown[]) => unknown;
  runExtra?: unknown;
  /**
   * Synced to disk before it is renamed into place (default). A checkpoint is not: a file cut
   * short by a crash fails its checks and is rebuilt, and each sync of a huge run's file is seconds.
   */
  sync?: boolean;
}

/** What `writeIndex` wrote: its size, and how to read its heavy records back (`ColdFile`). */
export interface Written {
  bytes: number;
  table: Table;
  chunks: number;
  groups: number;
  tag: string | null;
  /** The header's files (their order: a light record names files by their index). */
  files: string[];
  /** Heavy records copied from the index replaced (SAVED_EXTRA), not written again; and of those, how many with their light record. */
  copied: number;
  copiedLight: number;
  /** The groups of every record whose light record was written anew (the others are as they were in the index replaced), with their index in the save. */
  rewritten: Array<{ index: number; entry: GroupEntry }>;
}

/** A group's head for a file written by `writeIndex` (its `index` in the groups written), with the group's version. */
export function writtenHead(e: GroupEntry, index: number): GroupEntry {
  const h = headOf(e, Math.floor(index / CHUNK)) as GroupEntry;
  h.version = e.version;
  return h;
}

/** Opens a file `writeIndex` just wrote, to read its heavy records (null when it is not that file any more). */
export async function openWritten(file: string, w: Written): Promise<ColdFile | null> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return null;
  }
  if ((await fh.stat().catch(() => null))?.size !== w.bytes) {
    await fh.close().catch(() => undefined);
    return null;
  }
  return new ColdFile(file, fh, w.table, w.chunks, w.groups, w.tag, w.files);
}

/** Writes `header` and the groups to `file` (a temporary file renamed into place). */
export async function writeIndex(file: string, header: Omit<IndexHeader, 'groups' | 'format'>, src: SaveSource): Promise<Written> {
  await mkdir(dirname(file), { recursive: true });
  const old = src.cold;
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (!pendingBytes) return;
    const b = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await fh.write(b);
  };
  // Records copied from the index replaced go through one reused buffer (a save part way through a
  // huge open copies most of the run: a buffer per record would be that much garbage each time).
  // Copies and new records are written in order: adding to one writes out the other first.
  let copies = Buffer.allocUnsafe(1 << 22);
  let copied = 0;
  const writeCopies = async () => {
    if (!copied) return;
    await fh.write(copies, 0, copied);
    copied = 0;
  };
  /** Appends record `chunk` (light or heavy) of the index replaced; returns its [offset, length, sha1], or null when it cannot be read. */
  const copy = async (chunk: number, light: boolean): Promise<[number, number, Uint8Array] | null> => {
    const len = old!.recordLength(chunk, light);
    if (len < 0) return null;
    await flush();
    if (copied + len > copies.length) {
      await writeCopies();
      if (len > copies.length) copies = Buffer.allocUnsafe(len);
    }
    const hash = old!.readRecord(chunk, light, copies, copied);
    if (!hash) return null;
    const at = size;
    copied += len;
    size += len;
    if (copied >= 1 << 22) await writeCopies();
    return [at, len, hash];
  };
  /** Appends one record (`serialised`: v is its bytes already); returns its [offset, length, sha1]. */
  const record = async (v: unknown, serialised = false): Promise<[number, number, Buffer]> => {
    await writeCopies();
    const body = serialised ? (v as Buffer) : serialize(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.length, 0);
    const at = size;
    pending.push(len, body);
    pendingBytes += 4 + body.length;
    size += 4 + body.length;
    if (pendingBytes >= 1 << 22) await flush();
    return [at, 4 + body.length, createHash('sha1').update(len).update(body).digest()];
  };
  try {
    pending.push(MAGIC);
    pendingBytes += MAGIC.length;
    size = MAGIC.length;
    const slice = new TimeSlice();
    // the assembler's per-group state goes with each group's head (light records), not in the header
    // (in slices, as every pass over the run's groups here: a save must not stall the host)
    const fileIndex = new Map<string, number>();
    /** The file that fed a group (its index), or the files when more than one. */
    const fed = new Map<GroupKey, number | number[]>();
    for (let i = 0; i < header.asm.files.length; i++) {
      const [f, keys] = header.asm.files[i];
      fileIndex.set(f, i);
      for (let j = 0; j < keys.length; j++) {
        const k = keys[j];
        const l = fed.get(k);
        if (l === undefined) fed.set(k, i);
        else if (typeof l === 'number') fed.set(k, [l, i]);
        else l.push(i);
        if ((j & 1023) === 1023 && slice.due) await slice.next();
      }
    }
    const perGroup = (e: GroupEntry): PerGroup => {
      const cs = src.countedOf(e.key) ?? null;
      const f = fed.get(e.key);
      const fk = f === undefined ? [] : typeof f === 'number' ? [f] : f;
      if (fk.length === 1 && fk[0] === fileIndex.get(e.firstSource.file)) return cs ?? undefined;
      return [cs, fk];
    };
    const files = header.asm.files.map(([f]) => f);
    const asm: AssemblerState = { ...header.asm, files: header.asm.files.map(([f, , maxStep]) => [f, [], maxStep]), countedSize: [] };
    const [, headerLen, headerHash] = await record({ ...header, asm, format: CACHE_FORMAT, groups: src.count } satisfies IndexHeader);
    const chunks = Math.ceil(src.count / CHUNK);
    const spans = new Float64Array(4 * chunks);
    const hashes = new Uint8Array(40 * chunks);
    // The light records, written after the heavy ones: those written anew serialised as they are
    // made (smaller than their objects); those copied, by their record in the index replaced.
    const lights: Array<Buffer | number> = [];
    const sameTag = !!old && old.tag === header.extraTag;
    // A light record names files by their index in the header: copied only while the files saved
    // before keep theirs (new files come after them).
    const sameFiles = !!old && old.files.length <= files.length && old.files.every((f, i) => files[i] === f);
    let copiedHeavy = 0;
    let copiedLight = 0;
    const rewritten: Written['rewritten'] = [];
    const slots = src.slots[Symbol.iterator]();
    const keys: GroupKey[] = [];
    const saved: number[] = [];
    for (let c = 0; c < chunks; c++) {
      keys.length = 0;
      saved.length = 0;
      for (let j = 0; j < CHUNK; j++) {
        const n = slots.next();
        if (n.done) break;
        keys.push(n.value.key);
        saved.push(n.value.chunk);
      }
      if (keys.length !== Math.min(CHUNK, src.count - c * CHUNK)) throw new Error('the groups changed while they were saved');
      // The whole heavy record as saved before: its groups, each a complete cold head of that record
      // with the extra saved with it; and its light record too when it is the same record number
      // (a head names its record) and the files kept their numbers.
      const c0 = saved[0];
      const reuse =
        sameTag &&
        (src.extraOf === undefined || src.savedLight !== undefined) &&
        c0 >= 0 &&
        keys.length === old!.groupsIn(c0) &&
        saved.every((x) => x === c0) &&
        keys.every((k) => (src.extraOf ? src.unchanged?.(k) === true : header.extraTag === null));
      const heavy = reuse ? await copy(c0, false) : null;
      const light = heavy !== null && c === c0 && sameFiles;
      if (heavy) {
        spans[4 * c] = heavy[0];
        spans[4 * c + 1] = heavy[1];
        hashes.set(heavy[2], 20 * c);
        copiedHeavy++;
      }
      if (light) {
        lights.push(c0);
        copiedLight++;
        if (slice.due) await slice.next();
        continue;
      }
      const group = keys.map((k) => src.head(k));
      let xs: unknown[];
      if (heavy) xs = group.map((e) => src.savedLight?.(e));
      else {
        const full: GroupEntry[] = group.map((e) => (e.cold ? src.load(e) : e));
        const raw = group.map((e) => src.extraOf?.(e));
        // SAVED_EXTRA: the one saved before, under the same tag only (another tag's is not this save's)
        const extras = raw.map((x, j) => (x !== SAVED_EXTRA ? x : sameTag ? src.savedExtra(group[j]) : undefined));
        const [at, len, hash] = await record(packChunk(full, extras));
        spans[4 * c] = at;
        spans[4 * c + 1] = len;
        hashes.set(hash, 20 * c);
        xs = extras.map((x) => (x === undefined ? undefined : (src.lightOf?.(x) ?? x)));
      }
      const heads = group.map((e) => headOf(e, c));
      const l: LightChunk = { a: group.map(perGroup) };
      const hp = packHeads(heads);
      if (hp) l.hp = hp;
      else l.h = heads;
      if (src.lightPack) l.p = src.lightPack(xs);
      else l.x = xs;
      lights.push(serialize(l));
      group.forEach((entry, j) => rewritten.push({ index: c * CHUNK + j, entry }));
      if (slice.due) await slice.next();
    }
    if (!slots.next().done) throw new Error('the groups changed while they were saved');
    for (let c = 0; c < chunks; c++) {
      const l = lights[c];
      let at: number;
      let len: number;
      if (typeof l === 'number') {
        const raw = await copy(l, true);
        if (!raw) throw new Error('a saved record could not be read back to be copied');
        [at, len] = raw;
        hashes.set(raw[2], 20 * (chunks + c));
      } else {
        let hash: Buffer;
        [at, len, hash] = await record(l, true);
        hashes.set(hash, 20 * (chunks + c));
      }
      lights[c] = 0;
      spans[4 * c + 2] = at;
      spans[4 * c + 3] = len;
      if (slice.due) await slice.next();
    }
    const table: Table = { spans, hashes, runExtra: src.runExtra };
    const [tableAt, tableLen, tableHash] = await record(table);
    const tail = Buffer.alloc(TAIL);
    tail.writeDoubleLE(tableAt, 0);
    tail.writeUInt32LE(tableLen, 8);
    tail.writeUInt32LE(headerLen, 12);
    createHash('sha1').update(headerHash).update(tableHash).digest().copy(tail, 16);
    pending.push(tail, TRAILER);
    pendingBytes += tail.length + TRAILER.length;
    size += tail.length + TRAILER.length;
    await flush();
    if (src.sync !== false) await fh.sync();
    await fh.close();
    await rename(tmp, file);
    return { bytes: size, table, chunks, groups: src.count, tag: header.extraTag, files, copied: copiedHeavy, copiedLight, rewritten };
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Bytes of the trailer before its magic: table offset (f64), table length, header length (u32 each), SHA-1. */
const TAIL = 36;

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
