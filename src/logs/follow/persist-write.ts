// Writes the persisted index of a followed run (the format: persist.ts): the header, the heavy
// records (copied byte for byte from the index being replaced when their groups are unchanged),
// the light records, the table and the trailer, to a temporary file renamed into place.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { serialize } from 'node:v8';
import { CACHE_FORMAT } from '../cache/run-cache.js';
import type { AssemblerState } from '../assemble.js';
import type { GroupSlot } from '../group-table.js';
import type { GroupEntry } from '../entries.js';
import { packHeads } from './heads.js';
import type { GroupKey } from '../log-types.js';
import { TimeSlice } from '../../util/slice';
import { CHUNK, MAGIC, SAVED_EXTRA, TAIL, TRAILER, headOf, packChunk, type IndexHeader, type LightChunk, type PerGroup, type Table } from './persist.js';
import { ColdFile } from './persist-read.js';

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
