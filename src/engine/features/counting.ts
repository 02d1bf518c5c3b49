// Counting: character 4-grams of each response after scikit-learn's preprocessing (lowercase;
// every run of two or more Python whitespace characters becomes one space; n-grams over code
// points), as term ids with raw counts and document frequencies (docs/contract.md#ec-and-core,
// step 1). Speed matters (a group is 64 × ~2 KB): code points are mapped to a small per-group
// alphabet so a 4-gram is one exact integer key (a·S³ + b·S² + c·S + d < 2⁵³), counted in an
// open-addressing table instead of a string-keyed Map. Four paths, one result: all-ASCII groups
// in the WebAssembly kernel (which also weighs), at most 256 distinct code points fused in one
// pass, up to 9741 with exact double keys, beyond that string keys (the reference). The scratch
// buffers are reused across groups (the engine is single-threaded per worker thread).
import type { TfidfRows } from './rows';
import { idfOfDf } from './weighting';
import { align64, loadNgramKernel } from './kernel';
import { WASM_PAGE } from '../wasm';

/** Python's `\s` for str patterns (str.isspace): unlike JS `\s` it has U+001C–U+001F and U+0085 and lacks U+FEFF. */
const PY_WHITESPACE_RUN = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]{2,}/g;

export const NGRAM = 4;

/** sklearn's preprocessing + `_char_ngrams` whitespace normalisation, as a string. */
export function normaliseForNgrams(text: string): string {
  return text.toLowerCase().replace(PY_WHITESPACE_RUN, ' ');
}

// Scratch buffers reused across groups (the engine is single-threaded per worker thread).
const bmpIds = new Int32Array(65536).fill(-1);
let tableKeys = new Float64Array(1 << 15);
let tableIds = new Int32Array(1 << 15).fill(-1);

function ensureTable(capacity: number): void {
  if (tableKeys.length < capacity) {
    tableKeys = new Float64Array(capacity);
    tableIds = new Int32Array(capacity);
  }
  tableIds.fill(-1, 0, capacity);
}

/** ASCII whitespace in Python's `\s` (str.isspace): \t \n \v \f \r, U+001C–U+001F, space. */
const ASCII_SPACE = new Uint8Array(128);
for (const c of [9, 10, 11, 12, 13, 28, 29, 30, 31, 32]) ASCII_SPACE[c] = 1;

function isAscii(s: string): boolean {
  for (let p = 0; p < s.length; p++) if (s.charCodeAt(p) > 127) return false;
  return true;
}

/** Code points → per-group alphabet ids (any alphabet size). */
function codePointIds(normalised: readonly string[]): { seqs: Int32Array[]; alphabet: number; totalGrams: number } {
  const astral = new Map<number, number>();
  const touched: number[] = [];
  let alphabet = 0;
  let totalGrams = 0;
  const seqs = normalised.map((s) => {
    const ids = new Int32Array(s.length);
    let len = 0;
    for (let k = 0; k < s.length; k++) {
      let cp = s.charCodeAt(k);
      if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < s.length) {
        const lo = s.charCodeAt(k + 1);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
          k++;
        }
      }
      let id: number;
      if (cp < 65536) {
        id = bmpIds[cp];
        if (id < 0) {
          id = bmpIds[cp] = alphabet++;
          touched.push(cp);
        }
      } else {
        const got = astral.get(cp);
        if (got === undefined) astral.set(cp, (id = alphabet++));
        else id = got;
      }
      ids[len++] = id;
    }
    if (len >= NGRAM) totalGrams += len - NGRAM + 1;
    return ids.subarray(0, len);
  });
  for (const cp of touched) bmpIds[cp] = -1;
  return { seqs, alphabet, totalGrams };
}

function countGeneral(normalised: readonly string[]): TfidfRows {
  const { seqs, alphabet, totalGrams } = codePointIds(normalised);
  // Keys are exact integers while S⁴ < 2⁵³ (S ≤ 9741 distinct code points); beyond that (never
  // seen in practice) fall back to string keys.
  if (alphabet > 9741) return tfidfRowsSlow(seqs);
  return countLargeAlphabet(seqs, totalGrams, Math.max(alphabet, 1));
}

/** Per-document term lists with df, shared by both counting paths. */
class Counter {
  df = new Int32Array(1 << 12);
  lastDoc = new Int32Array(1 << 12).fill(-1);
  slot = new Int32Array(1 << 12);
  vocab = 0;
  w = 0;
  readonly terms: Int32Array;
  readonly counts: Float64Array;
  readonly start: Int32Array;
  constructor(
    readonly n: number,
    totalGrams: number,
  ) {
    this.terms = new Int32Array(totalGrams);
    this.counts = new Float64Array(totalGrams);
    this.start = new Int32Array(n + 1);
  }
  newTerm(): number {
    if (this.vocab === this.df.length) {
      const grow = (a: Int32Array, fill?: number) => {
        const b = new Int32Array(a.length * 2);
        if (fill !== undefined) b.fill(fill, a.length);
        b.set(a);
        return b;
      };
      this.df = grow(this.df);
      this.lastDoc = grow(this.lastDoc, -1);
      this.slot = grow(this.slot);
    }
    return this.vocab++;
  }
  rows(): TfidfRows {
    this.start[this.n] = this.w;
    return { n: this.n, start: this.start, terms: this.terms.subarray(0, this.w), values: this.counts.subarray(0, this.w), vocabularySize: this.vocab, df: this.df };
  }
}

// Scratch for the counting paths: the hash table holds four ints per entry (key, term id, last
// document seen, slot of the term in that document's row), so counting a 4-gram touches one
// cache line; `termDf` grows with the vocabulary. Reset per group.
let smallTable = new Int32Array(4 << 12);
let termDf: Int32Array<ArrayBuffer> = new Int32Array(1 << 12);
let rowTerms = new Int32Array(1 << 16);
let rowCounts = new Float64Array(1 << 16);
const utf8 = new TextEncoder();

/**
 * The common case: every response is ASCII. Counted in the WebAssembly kernel (ngrams.wat) when
 * this thread has it and it is enabled; null otherwise, or when any text is not ASCII. Its
 * JavaScript twin is `countSmallAlphabet` (an ASCII group's alphabet fits): the same term ids, rows
 * and values, bit for bit.
 */
function countAscii(texts: readonly string[]): TfidfRows | null {
  if (!ngramsWasmEnabled) return null;
  return countAsciiWasm(texts) ?? null;
}

let ngramsWasmEnabled = true;
/** Table size (log2) of the kernel's last group: a run's groups are alike, so start there. */
let wasmLastBits = 12;

/** Lets the ASCII path count in WebAssembly on this thread (the default) or not (benchmarks, tests). */
export function setNgramsWasmEnabled(enabled: boolean): void {
  ngramsWasmEnabled = enabled;
}

/**
 * `countSmallAlphabet` and `weigh` (weighting.ts) in the kernel: the texts are encoded straight into its memory and
 * one call normalises, counts, weighs and normalises the rows, bit for bit as the JS path does.
 * Null when a text is not ASCII; undefined when the kernel is unavailable or the group does not
 * fit its memory (the JS path then runs). The rows are views of the kernel's memory: valid until
 * the next call (a later group may grow the memory, which detaches them).
 */
function countAsciiWasm(texts: readonly string[]): TfidfRows | null | undefined {
  const k = loadNgramKernel();
  if (!k) return undefined;
  const n = texts.length;
  let total = 0;
  for (const s of texts) total += s.length;
  // 2^maxBits > 2·total: no vocabulary (at most one term per byte) can outgrow the table.
  const maxBits = Math.max(4, 32 - Math.clz32(2 * total));
  // Layout (see ngrams.wat): header and byte classes below 256, then at | idfOfDf | start | df |
  // terms | values | meta | text (16 bytes of slack for 16-byte loads) | table | scratch.
  const pAt = 256;
  const pIdfOfDf = align64(pAt + 4 * (n + 1));
  const pStart = align64(pIdfOfDf + 8 * (n + 1));
  const pDf = align64(pStart + 4 * (n + 1));
  const pTerms = align64(pDf + 4 * total);
  const pValues = align64(pTerms + 4 * total);
  const pMeta = align64(pValues + 8 * total);
  const pText = align64(pMeta + 8 * total);
  const pTable = align64(pText + total + 16);
  const pScratch = pTable + 8 * 2 ** maxBits;
  const end = pScratch + 4 * 2 ** maxBits;
  if (end > 2 ** 31) return undefined;
  const have = k.memory.buffer.byteLength;
  if (end > have) {
    try {
      k.memory.grow(Math.ceil((end - have) / WASM_PAGE));
    } catch {
      return undefined;
    }
  }
  // Views after any grow (growing detaches the old buffer).
  const buffer = k.memory.buffer;
  const mem = new Uint8Array(buffer);
  const at = new Int32Array(buffer, pAt, n + 1);
  let pos = pText;
  for (let d = 0; d < n; d++) {
    const s = texts[d];
    at[d] = pos;
    // Room for s.length bytes: all of s is read into as many bytes only when it is ASCII.
    const { read, written } = utf8.encodeInto(s, mem.subarray(pos, pos + s.length));
    if (read !== s.length || written !== s.length) return null;
    pos += written;
  }
  at[n] = pos;
  // idf depends on df alone (1..N), as in `weigh`.
  idfOfDf(n, new Float64Array(buffer, pIdfOfDf, n + 1));
  const bits = Math.max(4, Math.min(wasmLastBits, maxBits));
  const vocab = k.count(n, pAt, pIdfOfDf, pStart, pTerms, pValues, pDf, pMeta, pTable, pScratch, bits);
  wasmLastBits = new Int32Array(buffer, 0, 1)[0];
  const start = new Int32Array(buffer, pStart, n + 1);
  const w = start[n];
  return { n, start, terms: new Int32Array(buffer, pTerms, w), values: new Float64Array(buffer, pValues, w), vocabularySize: vocab, df: new Int32Array(buffer, pDf, vocab) };
}

/** Doubles the counting table (entries of four ints) and returns where `term`'s entry moved. */
function rehash(old: Int32Array, oldCap: number, bits: number, term: number): { table: Int32Array<ArrayBuffer>; e: number } {
  const cap = 1 << bits;
  const table = new Int32Array(4 * cap).fill(-1);
  let e = -1;
  for (let k = 0; k < 4 * oldCap; k += 4) {
    if (old[k + 1] < 0) continue;
    let h = (Math.imul(old[k], 0x9e3779b1) >>> (32 - bits)) << 2;
    while (table[h + 1] >= 0) h = (h + 4) & (4 * cap - 1);
    table[h] = old[k];
    table[h + 1] = old[k + 1];
    table[h + 2] = old[k + 2];
    table[h + 3] = old[k + 3];
    if (old[k + 1] === term) e = h;
  }
  if (table.length > smallTable.length) smallTable = table;
  return { table, e };
}

/**
 * Groups with some non-ASCII text, fused into one pass per document: at most 256 distinct BMP
 * code points in the group (no surrogates), so a 4-gram is one 32-bit key of four 8-bit ids, counted in an
 * open-addressing table with Fibonacci hashing that grows with the vocabulary (a small table
 * stays in cache). Returns null as soon as the group does not fit; the general path then runs.
 * The returned rows live in scratch buffers: valid until the next call.
 */
function countSmallAlphabet(texts: readonly string[]): TfidfRows | null {
  const n = texts.length;
  let totalChars = 0;
  for (const s of texts) totalChars += s.length;
  if (rowTerms.length < totalChars) {
    rowTerms = new Int32Array(totalChars);
    rowCounts = new Float64Array(totalChars);
  }
  const terms = rowTerms;
  const counts = rowCounts;
  const start = new Int32Array(n + 1);
  const touched: number[] = [];
  let alphabet = 0;
  let bits = 12;
  let cap = 1 << bits;
  let table = smallTable;
  table.fill(-1, 0, 4 * cap);
  let vocab = 0;
  let w = 0;
  let fits = true;
  // Module scratch copied to locals: the hot loop must not reload them from the closure.
  const ids = bmpIds;
  let df = termDf;
  outer: for (let d = 0; d < n; d++) {
    start[d] = w;
    // ASCII text (the common case) is lower-cased and whitespace-collapsed inline, exactly as
    // normaliseForNgrams would; other text goes through it (Unicode case mapping) first.
    const ascii = isAscii(texts[d]);
    const s = ascii ? texts[d] : normaliseForNgrams(texts[d]);
    const len = s.length;
    let key = 0;
    let emitted = 0;
    for (let p = 0; p < len; p++) {
      let cp = s.charCodeAt(p);
      if (ascii) {
        if (ASCII_SPACE[cp] === 1) {
          let q = p + 1;
          while (q < len && ASCII_SPACE[s.charCodeAt(q)] === 1) q++;
          if (q - p >= 2) {
            cp = 32;
            p = q - 1;
          }
        } else if (cp >= 65 && cp <= 90) cp += 32;
      }
      if (cp >= 0xd800 && cp <= 0xdfff) {
        fits = false;
        break outer;
      }
      let id = ids[cp];
      if (id < 0) {
        if (alphabet === 256) {
          fits = false;
          break outer;
        }
        id = ids[cp] = alphabet++;
        touched.push(cp);
      }
      key = (key << 8) | id;
      if (++emitted < 4) continue;
      let e = (Math.imul(key, 0x9e3779b1) >>> (32 - bits)) << 2;
      let term = table[e + 1];
      while (term >= 0 && table[e] !== key) {
        e = (e + 4) & (4 * cap - 1);
        term = table[e + 1];
      }
      if (term < 0) {
        term = vocab++;
        table[e] = key;
        table[e + 1] = term;
        if (vocab > df.length) df = termDf = grow(df);
        df[term] = 0;
        if (vocab * 2 > cap) {
          ({ table, e } = rehash(table, cap, ++bits, term));
          cap <<= 1;
        }
      }
      if (table[e + 2] !== d) {
        table[e + 2] = d;
        table[e + 3] = w;
        df[term]++;
        terms[w] = term;
        counts[w++] = 1;
      } else counts[table[e + 3]]++;
    }
  }
  for (const cp of touched) ids[cp] = -1;
  if (!fits) return null;
  start[n] = w;
  return { n, start, terms: terms.subarray(0, w), values: counts.subarray(0, w), vocabularySize: vocab, df };
}

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Up to 9741 distinct code points: exact double keys a·S³ + b·S² + c·S + d. */
function countLargeAlphabet(seqs: Int32Array[], totalGrams: number, alphabet: number): TfidfRows {
  const n = seqs.length;
  const S = alphabet;
  const S2 = S * S;
  const S3 = S2 * S;
  let capacity = 1 << 12;
  while (capacity < totalGrams * 2 && capacity < 1 << 24) capacity <<= 1;
  ensureTable(capacity);
  const mask = capacity - 1;
  const c = new Counter(n, totalGrams);
  const { terms, counts, start } = c;
  let w = 0;
  for (let d = 0; d < n; d++) {
    start[d] = w;
    const ids = seqs[d];
    const len = ids.length;
    if (len < NGRAM) continue;
    let key = ids[0] * S2 + ids[1] * S + ids[2];
    for (let p = 3; p < len; p++) {
      if (p > 3) key -= ids[p - 4] * S3;
      key = key * S + ids[p];
      let h = (Math.imul(ids[p - 3], 0x9e3779b1) ^ Math.imul(ids[p - 2], 0x85ebca77) ^ Math.imul(ids[p - 1], 0xc2b2ae3d) ^ Math.imul(ids[p], 0x27d4eb2f)) >>> 0;
      h = (h ^ (h >>> 15)) & mask;
      let term: number;
      for (;;) {
        const t = tableIds[h];
        if (t < 0) {
          term = tableIds[h] = c.newTerm();
          tableKeys[h] = key;
          break;
        }
        if (tableKeys[h] === key) {
          term = t;
          break;
        }
        h = (h + 1) & mask;
      }
      if (c.lastDoc[term] !== d) {
        c.lastDoc[term] = d;
        c.df[term]++;
        c.slot[term] = w;
        terms[w] = term;
        counts[w++] = 1;
      } else counts[c.slot[term]]++;
    }
  }
  c.w = w;
  return c.rows();
}

/** Reference path for groups with more than 9741 distinct code points: string keys. */
function tfidfRowsSlow(seqs: Int32Array[]): TfidfRows {
  const n = seqs.length;
  const vocabIds = new Map<string, number>();
  const dfList: number[] = [];
  const start = new Int32Array(n + 1);
  const terms: number[] = [];
  const values: number[] = [];
  for (let d = 0; d < n; d++) {
    start[d] = terms.length;
    const local = new Map<number, number>();
    const ids = seqs[d];
    for (let p = 0; p + NGRAM <= ids.length; p++) {
      const key = `${ids[p]},${ids[p + 1]},${ids[p + 2]},${ids[p + 3]}`;
      let t = vocabIds.get(key);
      if (t === undefined) {
        vocabIds.set(key, (t = dfList.length));
        dfList.push(0);
      }
      const slot = local.get(t);
      if (slot === undefined) {
        local.set(t, terms.length);
        terms.push(t);
        values.push(1);
        dfList[t]++;
      } else values[slot]++;
    }
  }
  start[n] = terms.length;
  return { n, start, terms: Int32Array.from(terms), values: Float64Array.from(values), vocabularySize: dfList.length, df: Int32Array.from(dfList) };
}

/**
 * The common case, counted and weighted in one kernel call: the TF-IDF rows of an all-ASCII group,
 * or null (not ASCII, kernel unavailable or disabled, group too large for its memory).
 */
export function countAndWeighInKernel(texts: readonly string[]): TfidfRows | null {
  return countAscii(texts);
}

/** Raw counts of any group (the JavaScript paths): weighting.ts turns them into TF-IDF. */
export function countTerms(texts: readonly string[]): TfidfRows {
  return countSmallAlphabet(texts) ?? countGeneral(texts.map(normaliseForNgrams));
}
