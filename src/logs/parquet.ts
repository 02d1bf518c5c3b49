// Parquet decoding for the TRL reader (docs/log-formats.md, "Bounds"). Two defences, so one
// hostile file (a few hundred bytes declaring 10^8 values in one RLE run) is an error and never a
// crash of the thread that asked:
// 1. `checkParquet` walks the footer and every page header of the columns to be read, and every
//    RLE/bit-packed run of their levels and dictionary indices, before hyparquet allocates
//    anything: declared counts are checked against the bytes present, the format's own limits
//    (a flat column has one value per row; a run never passes its page's declared values; SNAPPY
//    expands at most ~22×) and the reader's bounds (`PARQUET_LIMITS`); a column chunk or page
//    pointing outside the file is an error.
// 2. `readParquetColumns` parses in a worker thread with a heap limit (`resourceLimits`): what
//    slips past the checks exhausts the worker's heap, not the caller's.
import { existsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Decompress as ZstdStream } from 'fzstd';
import { parquetMetadata, snappyUncompress, type FileMetaData } from 'hyparquet';
// hyparquet's page-header reader and delta decoder (not re-exported by its index)
import { parquetHeader } from 'hyparquet/src/column.js';
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js';
import type { TableCells } from './json-table.js';
import { errorMessage } from '../util/errors.js';

const MB = 1 << 20;
/** What one row costs the reader once decoded (row object, roll-out, its source and extra):
 * ~1 KiB, measured (a file of 2^20 tiny rows took 1 GB; BENCHMARKS.md, "Per-MB resources"). */
export const ROW_DECODED_BYTES = 1024;

export const PARQUET_LIMITS = {
  /** Largest parquet file read. */
  maxFileBytes: 512 << 20,
  /** Most rows in one file (a TRL completions file holds one step's roll-outs). */
  maxRows: 1 << 20,
  /** Most values declared over all pages read (nested columns have several per row). */
  maxValues: 1 << 24,
  /** The parse worker's heap (MB). */
  workerHeapMb: 1536,
  /**
   * Most bytes a file may decode to (every value's bytes — a dictionary entry counted once per
   * reference — plus ROW_DECODED_BYTES a row), in one column chunk and in the whole file: 1/32 of
   * the machine's memory, between 256 MiB and 1 GiB. A 36 KB file whose one 30 KB dictionary
   * entry is referenced by 2^20 rows stands for 31 GB of text to score; it is refused here.
   */
  maxDecodedBytes: Math.min(1024 * MB, Math.max(256 * MB, Math.floor(totalmem() / 32))),
};

interface Reader {
  view: DataView;
  offset: number;
}

function fail(what: string): never {
  throw new Error(`invalid parquet: ${what}`);
}

function readVarInt(r: Reader, end: number): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (r.offset >= end) fail('a run header passes the end of its page');
    const b = r.view.getUint8(r.offset++);
    result += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return result;
    shift += 7;
    if (shift > 35) fail('a run header longer than 5 bytes');
  }
}

/**
 * Walks an RLE/bit-packed hybrid stream of `expected` values in bytes [r.offset, end), checking
 * that no run passes `expected` (bit-packed groups pad to 8) and that runs fit the bytes present;
 * `visit(value, count)` is called for each run of equal values when given (a bit-packed run value
 * by value, within the declared ones; the rest is padding).
 */
function walkHybrid(r: Reader, end: number, width: number, expected: number, visit?: (value: number, count: number) => void): void {
  let seen = 0;
  const bytesPerValue = (width + 7) >> 3;
  while (seen < expected) {
    const header = readVarInt(r, end);
    if (header & 1) {
      const groups = Math.floor(header / 2);
      const bytes = groups * width;
      if (r.offset + bytes > end) fail(`a bit-packed run of ${groups * 8} values has ${end - r.offset} of its ${bytes} bytes`);
      if (visit && width > 0) {
        const n = Math.min(groups * 8, expected - seen);
        let acc = 0;
        let bits = 0;
        let p = r.offset;
        // widths up to 32: the accumulator is read as a float-safe number, not 32-bit ints
        for (let i = 0; i < n; i++) {
          while (bits < width) {
            acc += r.view.getUint8(p++) * 2 ** bits;
            bits += 8;
          }
          const value = acc % 2 ** width;
          visit(value, 1);
          acc = Math.floor(acc / 2 ** width);
          bits -= width;
        }
      } else if (visit) visit(0, Math.min(groups * 8, expected - seen));
      r.offset += bytes;
      if (seen + groups * 8 > expected + 7) fail(`a bit-packed run passes the page's ${expected} declared values`);
      seen += groups * 8;
    } else {
      const count = Math.floor(header / 2);
      if (count > expected - seen) fail(`an RLE run of ${count} values passes the page's ${expected} declared values`);
      if (r.offset + bytesPerValue > end) fail('an RLE run passes the end of its page');
      let value = 0;
      for (let i = 0; i < bytesPerValue; i++) value += r.view.getUint8(r.offset++) * 2 ** (8 * i);
      if (count === 0 && header === 0) fail('an empty RLE run');
      if (visit) visit(value, count);
      seen += count;
    }
  }
}

const bitWidth = (max: number): number => (max ? 32 - Math.clz32(max) : 0);
const FIXED_WIDTH: Record<string, number> = { INT32: 4, INT64: 8, INT96: 12, FLOAT: 4, DOUBLE: 8 };

interface ColumnShape {
  maxDef: number;
  maxRep: number;
  type: string;
  typeLength: number;
}

/** Max definition/repetition levels of each leaf column, by its dotted path. */
function shapes(meta: FileMetaData): Map<string, ColumnShape> {
  const out = new Map<string, ColumnShape>();
  let i = 1;
  const walk = (path: string[], def: number, rep: number): void => {
    const el = meta.schema[i++];
    if (!el) fail('the schema ends early');
    const d = def + (el.repetition_type === 'REQUIRED' ? 0 : 1);
    const r = rep + (el.repetition_type === 'REPEATED' ? 1 : 0);
    const p = [...path, el.name];
    const n = el.num_children ?? 0;
    if (n > meta.schema.length) fail('a schema element declares more children than the schema holds');
    if (n) for (let k = 0; k < n; k++) walk(p, d, r);
    else out.set(p.join('.'), { maxDef: d, maxRep: r, type: el.type ?? 'BYTE_ARRAY', typeLength: el.type_length ?? 0 });
  };
  const top = meta.schema[0]?.num_children ?? 0;
  for (let k = 0; k < top; k++) walk([], 0, 0);
  return out;
}

/**
 * Checks `file` (the whole parquet file) before decoding the top-level `columns` (all when
 * undefined): throws an error saying what is wrong. Linear in the bytes of the checked pages.
 */
export function checkParquet(buf: ArrayBuffer, columns?: string[]): FileMetaData {
  const size = buf.byteLength;
  if (size < 12) fail(`${size} bytes, smaller than a parquet file's magic and footer`);
  const meta = parquetMetadata(buf);
  const rows = Number(meta.num_rows);
  if (!(rows >= 0) || rows > PARQUET_LIMITS.maxRows) fail(`declares ${meta.num_rows} rows (at most ${PARQUET_LIMITS.maxRows.toLocaleString('en-US')} are read)`);
  const footerStart = size - 8 - new DataView(buf).getUint32(size - 8, true);
  const leaves = shapes(meta);
  let groupRows = 0;
  let values = 0;
  const budget = PARQUET_LIMITS.maxDecodedBytes;
  const over = (what: string, bytes: number): never =>
    fail(`${what} decodes to more than ${Math.floor(bytes / MB).toLocaleString('en-US')} MB, over the ${Math.floor(budget / MB)} MB decode budget (1/32 of this machine's memory, at most 1 GiB); not read`);
  // every row costs the reader its objects, whatever its values
  let decoded = rows * ROW_DECODED_BYTES;
  if (decoded > budget) over(`${rows.toLocaleString('en-US')} rows (~${ROW_DECODED_BYTES} bytes each once read)`, decoded);
  const view = new DataView(buf);
  for (const rg of meta.row_groups) {
    const rgRows = Number(rg.num_rows);
    groupRows += rgRows;
    if (!(rgRows >= 0) || groupRows > rows) fail(`row groups declare more rows than the file's ${rows}`);
    for (const cc of rg.columns) {
      const md = cc.meta_data;
      if (!md) fail('a column chunk without metadata');
      const path = md.path_in_schema;
      if (columns && !columns.includes(path[0])) continue;
      const shape = leaves.get(path.join('.'));
      if (!shape) fail(`column ${path.join('.')} is not in the schema`);
      const start = Number(md.dictionary_page_offset ?? md.data_page_offset);
      const dataStart = Number(md.data_page_offset);
      const len = Number(md.total_compressed_size);
      const end = start + len;
      if (!(start >= 4) || !(dataStart >= start) || !(len >= 0) || end > footerStart) {
        fail(`column ${path.join('.')}: its chunk (bytes ${start}–${end}) is outside the file's ${footerStart} bytes of pages`);
      }
      const flat = shape.maxRep === 0;
      let seen = 0;
      const r: Reader = { view, offset: start };
      const chunk: Chunk = { dict: undefined, decoded: 0 };
      while (flat ? seen < rgRows : r.offset < end - 1) {
        if (r.offset >= end) fail(`column ${path.join('.')}: its pages end after ${seen} of ${rgRows} rows`);
        const sub: Reader = { view: new DataView(buf, r.offset, end - r.offset), offset: 0 };
        const ph = parquetHeader(sub);
        r.offset += sub.offset;
        const csize = ph.compressed_page_size;
        const usize = ph.uncompressed_page_size;
        if (!(csize >= 0) || r.offset + csize > end) fail(`column ${path.join('.')}: a page of ${csize} bytes passes the end of its chunk`);
        if (!(usize >= 0)) fail(`column ${path.join('.')}: a page declares ${usize} uncompressed bytes`);
        const codec = md.codec;
        if (codec === 'UNCOMPRESSED' && usize !== csize && ph.type !== 'DATA_PAGE_V2') fail(`column ${path.join('.')}: an uncompressed page of ${csize} bytes declares ${usize}`);
        // SNAPPY's densest element is a 3-byte copy of 64 bytes
        if (codec === 'SNAPPY' && usize > 22 * csize + 64) fail(`column ${path.join('.')}: a SNAPPY page of ${csize} bytes declares ${usize} (more than SNAPPY can expand to)`);
        const pageStart = r.offset;
        r.offset += csize;
        if (ph.type === 'DICTIONARY_PAGE') {
          const n = ph.dictionary_page_header?.num_values ?? 0;
          const min = FIXED_WIDTH[shape.type] ?? (shape.type === 'FIXED_LEN_BYTE_ARRAY' ? Math.max(1, shape.typeLength) : shape.type === 'BOOLEAN' ? 1 / 8 : 4);
          if (!(n >= 0) || n * min > usize) fail(`column ${path.join('.')}: a dictionary of ${n} values in ${usize} bytes`);
          chunk.dict = dictionarySizes(decompress(new Uint8Array(buf, pageStart, csize), usize, codec, path.join('.')), n, shape, path.join('.'));
          continue;
        }
        const v1 = ph.data_page_header;
        const v2 = ph.data_page_header_v2;
        if (!v1 && !v2) continue; // index pages: skipped by the decoder
        const n = (v1 ?? v2)!.num_values;
        if (!(n >= 0)) fail(`column ${path.join('.')}: a page declares ${n} values`);
        values += n;
        if (values > PARQUET_LIMITS.maxValues) fail(`more than ${PARQUET_LIMITS.maxValues.toLocaleString('en-US')} values declared`);
        const pageRows = v2 ? v2.num_rows : n;
        if (flat && pageRows > rgRows - seen) fail(`column ${path.join('.')}: a page declares ${pageRows} values where ${rgRows - seen} of the row group's ${rgRows} rows are left`);
        seen += flat ? pageRows : 0;
        const bytes = checkPage(buf, pageStart, csize, usize, ph, codec, shape, path.join('.'), chunk.dict);
        chunk.decoded += bytes;
        decoded += bytes;
        if (chunk.decoded > budget) over(`column ${path.join('.')}`, chunk.decoded);
        if (decoded > budget) over('the file', decoded);
      }
    }
  }
  if (groupRows !== rows) fail(`row groups hold ${groupRows} rows, the file declares ${rows}`);
  return meta;
}

type Header = ReturnType<typeof parquetHeader>;

/** A column chunk being checked: its dictionary's entry sizes, and the bytes its pages decode to. */
interface Chunk {
  dict: Float64Array | undefined;
  decoded: number;
}

/** The decoded size of each entry of a PLAIN dictionary page of `n` values. */
function dictionarySizes(page: Uint8Array, n: number, shape: ColumnShape, name: string): Float64Array {
  const out = new Float64Array(n);
  if (shape.type !== 'BYTE_ARRAY') {
    out.fill(FIXED_WIDTH[shape.type] ?? (shape.type === 'FIXED_LEN_BYTE_ARRAY' ? shape.typeLength : 1));
    return out;
  }
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (at + 4 > page.length) fail(`column ${name}: its dictionary ends after ${i} of ${n} entries`);
    const len = view.getUint32(at, true);
    at += 4 + len;
    if (at > page.length) fail(`column ${name}: a dictionary entry of ${len} bytes passes the end of its page`);
    out[i] = len;
  }
  return out;
}

/**
 * The levels and dictionary indices of one data page: runs within the declared values and bytes.
 * Returns the bytes its values decode to (a dictionary entry's size once per reference).
 */
function checkPage(buf: ArrayBuffer, at: number, csize: number, usize: number, ph: Header, codec: string, shape: ColumnShape, name: string, dict: Float64Array | undefined): number {
  const raw = new Uint8Array(buf, at, csize);
  let page: Uint8Array;
  let r: Reader;
  let nulls = 0;
  let encoding: string;
  let n: number;
  if (ph.data_page_header) {
    const h = ph.data_page_header;
    n = h.num_values;
    encoding = h.encoding;
    page = decompress(raw, usize, codec, name);
    r = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
    const levels = (max: number, count: boolean): number => {
      if (!max) return 0;
      if (r.offset + 4 > page.length) fail(`column ${name}: levels pass the end of a page`);
      const len = r.view.getUint32(r.offset, true);
      r.offset += 4;
      const end = r.offset + len;
      if (end > page.length) fail(`column ${name}: levels of ${len} bytes in a page of ${page.length}`);
      let hits = 0;
      walkHybrid(r, end, bitWidth(max), n, count ? (v, k) => void (v === max && (hits += k)) : undefined);
      r.offset = end;
      return hits;
    };
    levels(shape.maxRep, false);
    nulls = shape.maxDef ? n - levels(shape.maxDef, true) : 0;
  } else {
    const h = ph.data_page_header_v2!;
    n = h.num_values;
    encoding = h.encoding;
    const rl = h.repetition_levels_byte_length;
    const dl = h.definition_levels_byte_length;
    if (!(rl >= 0 && dl >= 0) || rl + dl > csize) fail(`column ${name}: levels of ${rl + dl} bytes in a page of ${csize}`);
    if (!(h.num_nulls >= 0 && h.num_nulls <= n)) fail(`column ${name}: ${h.num_nulls} nulls of ${n} values`);
    const lv: Reader = { view: new DataView(buf, at, rl + dl), offset: 0 };
    if (shape.maxRep) walkHybrid(lv, rl, bitWidth(shape.maxRep), n);
    lv.offset = rl;
    if (shape.maxDef) walkHybrid(lv, rl + dl, bitWidth(shape.maxDef), n);
    nulls = h.num_nulls;
    const rest = raw.subarray(rl + dl);
    const usizeValues = usize - rl - dl;
    if (usizeValues < 0) fail(`column ${name}: a page declares fewer bytes than its levels`);
    if (codec === 'SNAPPY' && usizeValues > 22 * rest.length + 64) fail(`column ${name}: a SNAPPY page of ${rest.length} bytes declares ${usizeValues}`);
    page = h.is_compressed !== false && usizeValues ? decompress(rest, usizeValues, codec, name) : rest;
    r = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
  }
  const present = n - nulls;
  const left = page.length - r.offset;
  const width = FIXED_WIDTH[shape.type] ?? (shape.type === 'FIXED_LEN_BYTE_ARRAY' ? shape.typeLength : shape.type === 'BOOLEAN' ? 1 : 0);
  if (encoding === 'PLAIN') {
    const need = shape.type === 'BOOLEAN' ? Math.ceil(present / 8) : width ? present * width : present * 4;
    if (need > left) fail(`column ${name}: ${present} PLAIN values need ${need} bytes, the page has ${left}`);
    return width ? present * width : left;
  }
  if (encoding === 'RLE_DICTIONARY' || encoding === 'PLAIN_DICTIONARY' || (encoding === 'RLE' && shape.type !== 'BOOLEAN')) {
    if (present && left < 1) fail(`column ${name}: dictionary indices missing`);
    if (!present) return 0;
    if (!dict) fail(`column ${name}: dictionary-encoded values without a dictionary page`);
    const bits = r.view.getUint8(r.offset++);
    if (bits > 32) fail(`column ${name}: dictionary indices of ${bits} bits`);
    let bytes = 0;
    const visit = (k: number, count: number): void => {
      if (k >= dict.length) fail(`column ${name}: dictionary index ${k} of a dictionary of ${dict.length} entries`);
      bytes += dict[k] * count;
    };
    if (bits) walkHybrid(r, page.length, bits, present, visit);
    else visit(0, present);
    return bytes;
  }
  if (encoding === 'RLE') {
    // booleans: a 4-byte length, then the hybrid stream (v1); the stream only (v2)
    if (ph.data_page_header) {
      if (left < 4) fail(`column ${name}: boolean values missing`);
      r.offset += 4;
    }
    walkHybrid(r, page.length, 1, present);
    return present;
  }
  if (encoding === 'BYTE_STREAM_SPLIT') {
    const w = FIXED_WIDTH[shape.type] ?? shape.typeLength;
    if (present * w > left) fail(`column ${name}: ${present} values need ${present * w} bytes, the page has ${left}`);
    return present * w;
  }
  if (encoding.startsWith('DELTA')) {
    // each value costs at least one bit of a miniblock; the block headers alone bound the rest
    if (present > left * 8 + 64) fail(`column ${name}: ${present} delta-encoded values in ${left} bytes`);
    if (encoding === 'DELTA_BYTE_ARRAY' && present) {
      // prefix compression: each value copies a prefix of the one before, so a few bits can
      // stand for a long text; the decoded size is the sum of prefix and suffix lengths
      const prefix = new Int32Array(present);
      const suffix = new Int32Array(present);
      try {
        deltaBinaryUnpack(r, present, prefix);
        deltaBinaryUnpack(r, present, suffix);
      } catch {
        fail(`column ${name}: delta lengths pass the end of their page`);
      }
      let bytes = 0;
      let prev = 0;
      for (let i = 0; i < present; i++) {
        if (prefix[i] < 0 || suffix[i] < 0 || prefix[i] > prev) fail(`column ${name}: a value's prefix of ${prefix[i]} bytes where the value before has ${prev}`);
        prev = prefix[i] + suffix[i];
        bytes += prev;
      }
      return bytes;
    }
    return width ? present * width : left;
  }
  return left;
}

/**
 * A ZSTD page (polars writes ZSTD by default: miles' dashboard columns) into exactly its declared
 * size: a frame that decodes to more or less is an error, never a larger buffer.
 */
export function zstdPage(raw: Uint8Array, usize: number): Uint8Array {
  const out = new Uint8Array(usize);
  let n = 0;
  try {
    // streamed, so the bytes a frame decodes to are counted as they come (a frame that
    // declares no content size is bounded the same way)
    const d = new ZstdStream((chunk: Uint8Array) => {
      if (n + chunk.length > usize) throw new Error('more than declared');
      out.set(chunk, n);
      n += chunk.length;
    });
    d.push(raw, true);
  } catch (err) {
    throw new Error(`ZSTD page does not decode into its declared ${usize} bytes (${errorMessage(err)})`);
  }
  if (n !== usize) throw new Error(`ZSTD page decodes to ${n} bytes, not its declared ${usize}`);
  return out;
}

function decompress(raw: Uint8Array, usize: number, codec: string, name: string): Uint8Array {
  if (codec === 'UNCOMPRESSED') return raw;
  if (codec === 'SNAPPY') {
    const out = new Uint8Array(usize);
    snappyUncompress(raw, out);
    return out;
  }
  if (codec === 'ZSTD') {
    try {
      return zstdPage(raw, usize);
    } catch (err) {
      fail(`column ${name}: ${errorMessage(err)}`);
    }
  }
  fail(`column ${name}: unsupported compression ${codec}`);
}

/** A column's values: `uniq[idx[row]]` (repeated strings sent once between threads). */
export interface ParquetColumn {
  uniq: unknown[];
  idx: Int32Array;
}

export interface ParquetColumns {
  names: string[];
  rows: number;
  columns: Record<string, ParquetColumn>;
}

/** Rows, one object at a time (shared strings stay shared). */
export function rowsOf(t: ParquetColumns): { length: number; at(i: number): Record<string, unknown> } {
  const cols = Object.entries(t.columns);
  return {
    length: t.rows,
    at(i) {
      const row: Record<string, unknown> = {};
      for (const [name, c] of cols) row[name] = c.uniq[c.idx[i]];
      return row;
    },
  };
}

/** Largest W&B table file read (a W&B table is capped far below it). */
export const WANDB_MAX_TABLE_BYTES = 512 << 20;

/** The columns of a TRL W&B table the views use (besides the reward columns). */
export const TRL_READ = new Set(['mode', 'step', 'prompt', 'completion', 'advantage']);

/** A W&B table read on the parse thread: `known` reward names (TRL), or one column's cells. */
export interface WandbAsk {
  file: string;
  known?: string[];
  column?: number;
}

export type WandbTable =
  | { kind: 'trl'; names: string[]; picked: { columns: string[]; why?: string }; table: TableCells }
  | { kind: 'verl' | 'cells'; names: string[]; table: TableCells; picked?: undefined }
  | { kind: 'none'; names: string[]; table?: undefined; picked?: undefined };

interface Pending {
  resolve: (v: never) => void;
  reject: (e: Error) => void;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let seq = 0;
/** An idle parse thread is ended after this long (its heap is freed; the next read starts one). */
const IDLE_MS = 30_000;
let idle: NodeJS.Timeout | undefined;

function workerOptions(): { script: string; eval: boolean } {
  const js = join(__dirname, 'parquet-worker.js');
  if (existsSync(js)) return { script: js, eval: false };
  // Running from the TypeScript sources (tests through tsx): the thread registers tsx first.
  const ts = join(__dirname, 'parquet-worker.ts');
  return { script: `require('tsx/cjs/api').register(); require(${JSON.stringify(ts)});`, eval: true };
}

function getWorker(): Worker {
  if (worker) return worker;
  const o = workerOptions();
  const w = new Worker(o.script, {
    eval: o.eval,
    resourceLimits: { maxOldGenerationSizeMb: PARQUET_LIMITS.workerHeapMb, maxYoungGenerationSizeMb: 64 },
  });
  worker = w;
  w.on('message', (m: { seq: number; value?: never; error?: string; name?: string }) => {
    const p = pending.get(m.seq);
    if (!p) return;
    pending.delete(m.seq);
    if (m.error !== undefined) {
      const e = new Error(m.error);
      if (m.name === 'NotALog') e.name = m.name;
      p.reject(e);
    } else p.resolve(m.value!);
    if (!pending.size) {
      w.unref();
      clearTimeout(idle);
      idle = setTimeout(() => {
        if (worker === w && !pending.size) {
          worker = undefined;
          void w.terminate();
        }
      }, IDLE_MS);
      idle.unref();
    }
  });
  const die = (why: string): void => {
    if (worker === w) worker = undefined;
    for (const p of pending.values()) p.reject(new Error(why));
    pending.clear();
  };
  w.on('error', (e: Error & { code?: string }) =>
    die(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `decoding needs more than the parse thread's ${PARQUET_LIMITS.workerHeapMb} MB` : `the parse thread failed: ${e.message}`),
  );
  w.on('exit', (code) => die(`the parse thread exited (code ${code})`));
  return w;
}

/**
 * The top-level `columns` (all when undefined) of the parquet file at `file`, parsed and checked
 * in a worker thread with a bounded heap (module header). Rejects with what is wrong.
 */
export function readParquetColumns(file: string, columns?: string[]): Promise<ParquetColumns> {
  return ask<ParquetColumns>({ file, columns });
}

/**
 * The columns of the W&B table file `ask.file` that its reader uses (wandb.ts), read on the parse
 * thread from the file's bytes, never parsed whole (json-table.ts).
 */
export function readWandbColumns(a: WandbAsk): Promise<WandbTable> {
  return ask<WandbTable>({ file: a.file, wandb: a });
}

function ask<T>(message: Record<string, unknown>): Promise<T> {
  clearTimeout(idle);
  const w = getWorker();
  w.ref();
  const id = seq++;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (v: never) => void, reject });
    w.postMessage({ seq: id, ...message });
  });
}
