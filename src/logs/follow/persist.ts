// The persisted index of a followed run (the extension's): what RunIndex knows of each file and the
// assembler's groups and state, saved outside the run folder so that a second open of an unchanged
// run reads this file instead of the logs, and an appended file is read from where it stopped.
// This module holds the format (the record layouts and what writer and reader share); the writer
// is persist-write.ts, the reader and the on-demand record reads persist-read.ts.
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
import { fileIdentity, sameIdentity, type FileIdentity } from '../cache/identity.js';
import type { AssemblerState } from '../assemble.js';
import { coldRef, confidentCount, type GroupEntry } from '../entries.js';
import type { PackedHeads } from './heads.js';
import type { ParserState } from '../parse.js';
import type { GroupKey, Notice } from '../log-types.js';
import type { FileState } from './files.js';

export const MAGIC = Buffer.from('CLINDEX\u0003', 'latin1');
export const TRAILER = Buffer.from('CLIFOOT\u0001', 'latin1');
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

export interface Chunk {
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
export interface LightChunk {
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
export type PerGroup = undefined | number | [number | null, number[]];

/** Where the records are, and what the run as a whole saved (see the header of this file). */
export interface Table {
  /** Per heavy record: offset of its length prefix, its byte length (with the prefix), then the same for its light record. */
  spans: Float64Array;
  /** SHA-1 of each heavy record, then of each light record (20 bytes each). */
  hashes: Uint8Array;
  runExtra: unknown;
}

export type Span = [number, number];
const COLUMNS = ['ml', 'rw', 'si'] as const;
/** The fields a head does not carry (they stay in the heavy record). */
const HEAVY_FIELDS: ReadonlySet<string> = new Set(['packed', 'list', 'prompt', 'groundTruthForms', 'loggedOperator', 'version', 'cold']);

/** The entries of a chunk with their packed columns moved into one array. */
export function packChunk(entries: GroupEntry[], extras: unknown[]): Chunk {
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
export function headOf(e: GroupEntry, chunk: number): Omit<GroupEntry, 'version'> {
  // Copied field by field, not spread and then deleted from: a delete turns an object into a
  // dictionary, ~3× the bytes, and a head per group is kept after every save.
  const h: Record<string, unknown> = {};
  for (const k in e) if (!HEAVY_FIELDS.has(k)) h[k] = e[k as keyof GroupEntry];
  h.cold = coldRef(chunk, confidentCount(e));
  return h as Omit<GroupEntry, 'version'>;
}

/** A chunk's entry (decoded, changed in place) with its columns back in typed arrays of their own (a worker thread gets a group's numbers, not the chunk's). */
export function unpackEntry(e: Omit<GroupEntry, 'version'>, cols: Float64Array): GroupEntry {
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

/** Bytes of the trailer before its magic: table offset (f64), table length, header length (u32 each), SHA-1. */
export const TAIL = 36;

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
