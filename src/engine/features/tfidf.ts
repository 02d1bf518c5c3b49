// Reasoning vectors h_i (SPEC §4.3 step 1): character 4-gram TF-IDF fitted on one group's
// responses, with scikit-learn's exact semantics (TfidfVectorizer(analyzer='char',
// ngram_range=(4,4)), defaults otherwise):
//   lowercase (str.lower) → every run of two or more whitespace characters (Python's `\s`) becomes
//   one space → n-grams over code points → raw counts → idf = ln((1+N)/(1+df)) + 1 → L2 rows.
//
// Speed matters (a group is 64 × ~2 KB): code points are mapped to a small per-group alphabet so
// a 4-gram is one exact integer key (a·S³ + b·S² + c·S + d < 2⁵³), counted in an open-addressing
// table instead of a string-keyed Map. Only the cosines the answer kernel keeps (within-class
// pairs) are ever computed. All-ASCII groups (the common case) are counted in a WebAssembly
// kernel (ngrams.wat), which also computes the within-class cosines of every group; the
// JavaScript paths stay as reference and fallback.

import { ngramsWasmBytes } from './ngrams-wasm';
import { instantiateKernel, WASM_PAGE, type WasmMemory } from '../wasm';

/** Python's `\s` for str patterns (str.isspace): unlike JS `\s` it has U+001C–U+001F and U+0085 and lacks U+FEFF. */
const PY_WHITESPACE_RUN = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]{2,}/g;

export const NGRAM = 4;

/** sklearn's preprocessing + `_char_ngrams` whitespace normalisation, as a string. */
export function normaliseForNgrams(text: string): string {
  return text.toLowerCase().replace(PY_WHITESPACE_RUN, ' ');
}

/** L2-normalised sparse TF-IDF rows: row r holds terms[start[r]..start[r+1]) with their values. */
export interface TfidfRows {
  n: number;
  start: Int32Array;
  terms: Int32Array;
  values: Float64Array;
  vocabularySize: number;
  /** Document frequency of each term (first `vocabularySize` entries). */
  df: Int32Array;
}

// Scratch buffers reused across groups (the engine is single-threaded per worker thread).
let bmpIds = new Int32Array(65536).fill(-1);
let tableKeys = new Float64Array(1 << 15);
let tableIds = new Int32Array(1 << 15).fill(-1);

function ensureTable(capacity: number): void {
  if (tableKeys.length < capacity) {
    tableKeys = new Float64Array(capacity);
    tableIds = new Int32Array(capacity);
  }
  tableIds.fill(-1, 0, capacity);
}

/** Fits TF-IDF on `texts` (one group) and returns the L2-normalised rows. */
export function tfidfRows(texts: readonly string[]): TfidfRows {
  return countAscii(texts) ?? countSmallAlphabet(texts) ?? countGeneral(texts.map(normaliseForNgrams));
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
  constructor(readonly n: number, totalGrams: number) {
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
  finish(): TfidfRows {
    this.start[this.n] = this.w;
    return finish(this.n, this.start, this.terms.subarray(0, this.w), this.counts.subarray(0, this.w), this.df, this.vocab);
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

// The WebAssembly kernel of the ASCII path (ngrams.wat): one module instance (and one linear
// memory) per thread, created on first use (see ../wasm.ts).
type CountKernel = (
  n: number, pAt: number, pIdfOfDf: number, pStart: number, pTerms: number, pValues: number, pDf: number, pMeta: number,
  pTable: number, pScratch: number, bits: number,
) => number;
type ClassifyKernel = (pDf: number, vocab: number, maxSparse: number, pCode: number) => number;
type CosinesKernel = (
  pStart: number, pTerms: number, pValues: number, pCode: number, D: number, k: number, pSizes: number, pMembers: number,
  pOut: number, pEntries: number, pList: number, pF: number,
) => void;
interface NgramKernel {
  memory: WasmMemory;
  count: CountKernel;
  classify: ClassifyKernel;
  cosines: CosinesKernel;
}

/** undefined: not tried yet on this thread; null: unavailable (no WebAssembly, or it failed). */
let ngramKernel: NgramKernel | null | undefined;
let ngramsWasmEnabled = true;
/** Table size (log2) of the kernel's last group: a run's groups are alike, so start there. */
let wasmLastBits = 12;

function loadNgramKernel(): NgramKernel | null {
  if (ngramKernel !== undefined) return ngramKernel;
  const exports = instantiateKernel(ngramsWasmBytes);
  ngramKernel = exports && {
    memory: exports.memory as WasmMemory,
    count: exports.count as CountKernel,
    classify: exports.classify as ClassifyKernel,
    cosines: exports.cosines as CosinesKernel,
  };
  return ngramKernel;
}

/** Lets the ASCII path count in WebAssembly on this thread (the default) or not (benchmarks, tests). */
export function setNgramsWasmEnabled(enabled: boolean): void {
  ngramsWasmEnabled = enabled;
}

/** Whether this thread counts ASCII groups in WebAssembly (loads the kernel on first call). */
export function ngramsWasmAvailable(): boolean {
  return loadNgramKernel() !== null;
}

const align64 = (bytes: number): number => Math.ceil(bytes / 64) * 64;

/**
 * `countSmallAlphabet` and `finish` in the kernel: the texts are encoded straight into its memory and
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
  // idf depends on df alone (1..N), as in `finish`.
  const idfOfDf = new Float64Array(buffer, pIdfOfDf, n + 1);
  for (let c = 1; c <= n; c++) idfOfDf[c] = Math.log((1 + n) / (1 + c)) + 1;
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
  return finish(n, start, terms.subarray(0, w), counts.subarray(0, w), df, vocab);
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
  return c.finish();
}

/** idf weighting and L2 normalisation of raw counts (in place). */
function finish(n: number, start: Int32Array, terms: Int32Array, values: Float64Array, df: Int32Array, vocab: number): TfidfRows {
  // idf depends on df alone (1..N): one logarithm per possible df, not one per term.
  const idfOfDf = new Float64Array(n + 1);
  for (let c = 1; c <= n; c++) idfOfDf[c] = Math.log((1 + n) / (1 + c)) + 1;
  const idf = new Float64Array(vocab);
  for (let t = 0; t < vocab; t++) idf[t] = idfOfDf[df[t]];
  for (let d = 0; d < n; d++) {
    let ss = 0;
    for (let k = start[d]; k < start[d + 1]; k++) {
      const v = values[k] * idf[terms[k]];
      values[k] = v;
      ss += v * v;
    }
    if (ss > 0) {
      const inv = 1 / Math.sqrt(ss);
      for (let k = start[d]; k < start[d + 1]; k++) values[k] *= inv;
    }
  }
  return { n, start, terms, values, vocabularySize: vocab, df };
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
  return finish(n, start, Int32Array.from(terms), Float64Array.from(values), Int32Array.from(dfList), dfList.length);
}

/**
 * cos(h_i, h_j) for every pair i < j of `members`, packed row-major over the upper triangle
 * (index of (a, b), a < b, in member order: a·m − a(a+1)/2 + (b − a − 1)). Rows are unit or zero,
 * so the cosine is the dot product (zero rows give 0, as scikit-learn's cosine_similarity does).
 */
export function cosinesWithin(rows: TfidfRows, members: readonly number[]): Float64Array {
  return cosinesByClass(rows, [members])[0];
}

// Scratch for cosinesByClass, grown on demand.
let termCode = new Int32Array(1 << 14);
let listStart = new Int32Array(1 << 14);
let listEnd = new Int32Array(1 << 14);
let listSlot = new Int32Array(1 << 16);
let listValue = new Float64Array(1 << 16);
let gramRows = new Float64Array(1 << 16);

/**
 * A term in more than this fraction of the group's responses is a dense column of every class's
 * matrix (its share of the pair products is a dense, sequential Gram product); rarer terms add
 * their pairs one by one. On 2 KB reasoning texts most pair products come from a few hundred
 * frequent 4-grams (" the", "= 2"), while most shared terms are in 2–5 responses. Only speed
 * depends on it (the JS path's value).
 */
const DENSE_SHARE = 0.3;

/**
 * The same for the kernel, where a dense column costs far less against a sparse pair: its Gram
 * product runs at ~0.15 ns per (pair, column), its sparse pairs at ~6 ns each (a chained,
 * data-dependent walk). A term in d of the n responses gives about C(d,2)·P within-class pairs
 * (P: the chance that two responses share a class) and as a column costs P·C(n,2) pairs, so the
 * break-even d/n is about √(0.15/6) ≈ 0.16 whatever the classes; 0.1–0.2 measured alike on
 * .bench/core-200.jsonl (bench/cosines-bench.ts), 0.3 ~20% slower.
 */
const WASM_DENSE_SHARE = 0.15;

let cosinesWasmEnabled = true;

/** Lets `cosinesByClass` run in WebAssembly on this thread (the default) or not (benchmarks, tests). */
export function setCosinesWasmEnabled(enabled: boolean): void {
  cosinesWasmEnabled = enabled;
}

/**
 * The within-class cosines of every class (each packed as in `cosinesWithin`): only the pairs the
 * answer kernel keeps. In the WebAssembly kernel (`cosinesByClassWasm`) when this thread has it
 * and it is enabled, else in JavaScript (`cosinesByClassJs`, the reference); the two agree to
 * rounding (the same products, summed in another order). Ordinary arrays, owned by the caller.
 */
export function cosinesByClass(rows: TfidfRows, classes: readonly (readonly number[])[]): Float64Array[] {
  if (cosinesWasmEnabled) {
    const out = cosinesByClassWasm(rows, classes);
    if (out) return out;
  }
  return cosinesByClassJs(rows, classes);
}

/**
 * `cosinesByClassJs` in the kernel (ngrams.wat: `classify`, then `cosines`), on the same kind of
 * split of terms (at its own threshold, WASM_DENSE_SHARE). Rows the kernel counted are used in
 * place; others (the JS counting paths) are copied in. Per class, one branch-free pass over its
 * members' rows fills the dense columns and chains each sparse entry to the term's previous one
 * in the class (no per-term lists to gather and split), the chains add their pairs, and an f64x2
 * Gram product adds the dense columns'. Null when the kernel is unavailable or the group does not
 * fit its memory. If the memory has to grow, rows that are views of it are re-made on the grown
 * memory (they stay valid until the kernel's next group, as before).
 */
export function cosinesByClassWasm(rows: TfidfRows, classes: readonly (readonly number[])[]): Float64Array[] | null {
  const k = loadNgramKernel();
  if (!k) return null;
  const out: Float64Array[] = new Array(classes.length);
  let paired = 0;
  let slots = 0;
  let pairs = 0;
  let mMax = 0;
  for (let ci = 0; ci < classes.length; ci++) {
    const m = classes[ci].length;
    if (m < 2) {
      out[ci] = new Float64Array(0);
      continue;
    }
    paired++;
    slots += m;
    pairs += (m * (m - 1)) / 2;
    if (m > mMax) mMax = m;
  }
  if (paired === 0) return out;
  const { n } = rows;
  const w = rows.start[n];
  const V = rows.vocabularySize;
  const buffer0 = k.memory.buffer;
  const inPlace = rows.start.buffer === buffer0 && rows.terms.buffer === buffer0 && rows.values.buffer === buffer0 && rows.df.buffer === buffer0;
  // Layout: the rows (in place, or copied from 256), then code | sizes | members | out | entries | F.
  let pStart = 256;
  let pDf = align64(pStart + 4 * (n + 1));
  let pTerms = align64(pDf + 4 * V);
  let pValues = align64(pTerms + 4 * w);
  let base = align64(pValues + 8 * w);
  if (inPlace) {
    pStart = rows.start.byteOffset;
    pDf = rows.df.byteOffset;
    pTerms = rows.terms.byteOffset;
    pValues = rows.values.byteOffset;
    base = align64(Math.max(pStart + 4 * (n + 1), pDf + 4 * V, pTerms + 4 * w, pValues + 8 * w));
  }
  const pCode = base;
  const pSizes = align64(pCode + 4 * V);
  const pMembers = align64(pSizes + 4 * paired);
  const pOut = align64(pMembers + 4 * slots);
  const pEntries = align64(pOut + 8 * pairs);
  const pList = align64(pEntries + 16 * (w + 2));
  const pF = align64(pList + 8 * (w + 1));
  if (!growKernelMemory(k, pF, inPlace ? rows : null)) return null;
  if (!inPlace) {
    const buffer = k.memory.buffer;
    new Int32Array(buffer, pStart, n + 1).set(rows.start.subarray(0, n + 1));
    new Int32Array(buffer, pDf, V).set(rows.df.subarray(0, V));
    new Int32Array(buffer, pTerms, w).set(rows.terms.subarray(0, w));
    new Float64Array(buffer, pValues, w).set(rows.values.subarray(0, w));
  }
  const D = k.classify(pDf, V, Math.floor(WASM_DENSE_SHARE * n), pCode);
  // F: the largest class's rows of D columns rounded up to even (16-byte rows).
  if (!growKernelMemory(k, pF + 8 * mMax * (D + (D & 1)), inPlace ? rows : null)) return null;
  const buffer = k.memory.buffer;
  const sizes = new Int32Array(buffer, pSizes, paired);
  const members = new Int32Array(buffer, pMembers, slots);
  for (let ci = 0, c = 0, at = 0; ci < classes.length; ci++) {
    const cl = classes[ci];
    const m = cl.length;
    if (m < 2) continue;
    sizes[c++] = m;
    for (let a = 0; a < m; a++) members[at++] = cl[a];
  }
  k.cosines(pStart, pTerms, pValues, pCode, D, paired, pSizes, pMembers, pOut, pEntries, pList, pF);
  const all = new Float64Array(buffer, pOut, pairs);
  for (let ci = 0, at = 0; ci < classes.length; ci++) {
    const m = classes[ci].length;
    if (m < 2) continue;
    const len = (m * (m - 1)) / 2;
    out[ci] = all.slice(at, at + len);
    at += len;
  }
  return out;
}

/**
 * Grows the kernel's memory to at least `end` bytes (false when it cannot). Growing detaches
 * every view of the old memory: `rows`, when they are such views, are re-made on the new one.
 */
function growKernelMemory(k: NgramKernel, end: number, rows: TfidfRows | null): boolean {
  if (end > 2 ** 31) return false;
  const have = k.memory.buffer.byteLength;
  if (end <= have) return true;
  const views = rows && {
    start: [rows.start.byteOffset, rows.start.length],
    terms: [rows.terms.byteOffset, rows.terms.length],
    values: [rows.values.byteOffset, rows.values.length],
    df: [rows.df.byteOffset, rows.df.length],
  };
  try {
    k.memory.grow(Math.ceil((end - have) / WASM_PAGE));
  } catch {
    return false;
  } finally {
    if (rows && views) {
      const buffer = k.memory.buffer;
      rows.start = new Int32Array(buffer, views.start[0], views.start[1]);
      rows.terms = new Int32Array(buffer, views.terms[0], views.terms[1]);
      rows.values = new Float64Array(buffer, views.values[0], views.values[1]);
      rows.df = new Int32Array(buffer, views.df[0], views.df[1]);
    }
  }
  return true;
}

/**
 * The JavaScript twin of `cosinesByClassWasm` (the reference; the fallback without WebAssembly).
 * Terms are split once per group by document frequency: a term in one response adds exactly 0 to
 * every dot product and is skipped; frequent terms become dense columns, multiplied class by
 * class; the others are gathered into one list per term (ordered by class and member), whose runs
 * inside one class add their pairs.
 */
export function cosinesByClassJs(rows: TfidfRows, classes: readonly (readonly number[])[]): Float64Array[] {
  const out: Float64Array[] = [];
  for (const c of classes) out.push(new Float64Array((c.length * (c.length - 1)) / 2));
  const { n, start, terms, values, df } = rows;
  const V = rows.vocabularySize;
  if (termCode.length < V) {
    termCode = new Int32Array(Math.max(V, 2 * termCode.length));
    listStart = new Int32Array(termCode.length + 1);
    listEnd = new Int32Array(termCode.length + 1);
  }
  // termCode: dense column (≥ 0), sparse list (−2 − id) or −1 (in one response only).
  const code = termCode;
  const threshold = DENSE_SHARE * n;
  let D = 0;
  let sparse = 0;
  let listed = 0;
  for (let t = 0; t < V; t++) {
    const c = df[t];
    if (c < 2) code[t] = -1;
    else if (c > threshold) code[t] = D++;
    else {
      listStart[sparse] = listed;
      listEnd[sparse] = listed;
      listed += c;
      code[t] = -2 - sparse++;
    }
  }
  if (listSlot.length < listed) {
    listSlot = new Int32Array(listed);
    listValue = new Float64Array(listed);
  }
  const le = listEnd;
  const ls = listSlot;
  const lv = listValue;
  // Slots number the members of every class with a pair, class after class. Plain loops over
  // typed copies: member arrays of different element kinds would deoptimise a closure here.
  let slots = 0;
  for (const c of classes) if (c.length >= 2) slots += c.length;
  const slotClass = new Int32Array(slots);
  const slotPos = new Int32Array(slots);
  const sizes = new Int32Array(classes.length);
  let slot = 0;
  for (let ci = 0; ci < classes.length; ci++) {
    const c = classes[ci];
    const m = c.length;
    sizes[ci] = m;
    if (m < 2) continue;
    if (gramRows.length < m * D) gramRows = new Float64Array(Math.max(m * D, 2 * gramRows.length));
    const F = gramRows;
    F.fill(0, 0, m * D);
    for (let a = 0; a < m; a++, slot++) {
      slotClass[slot] = ci;
      slotPos[slot] = a;
      const i = c[a];
      const row = a * D;
      for (let k = start[i]; k < start[i + 1]; k++) {
        const id = code[terms[k]];
        if (id >= 0) F[row + id] = values[k];
        else if (id < -1) {
          const p = le[-2 - id]++;
          ls[p] = slot;
          lv[p] = values[k];
        }
      }
    }
    if (D > 0) gram(F, m, D, out[ci]);
  }
  // Each sparse list is ordered by slot: its runs of one class add their pairs.
  for (let s = 0; s < sparse; s++) {
    const e = le[s];
    let p = listStart[s];
    while (p < e - 1) {
      const ci = slotClass[ls[p]];
      let q = p + 1;
      while (q < e && slotClass[ls[q]] === ci) q++;
      if (q - p > 1) {
        const o = out[ci];
        const m = sizes[ci];
        for (let u = p; u < q - 1; u++) {
          const a = slotPos[ls[u]];
          const base = a * m - (a * (a + 1)) / 2 - a - 1;
          const va = lv[u];
          for (let v = u + 1; v < q; v++) o[base + slotPos[ls[v]]] += va * lv[v];
        }
      }
      p = q;
    }
  }
  return out;
}

/** out[pair(a, b)] += F_a · F_b for a < b (packed upper triangle), F row-major m × f. */
function gram(F: Float64Array, m: number, f: number, out: Float64Array): void {
  for (let a = 0; a < m - 1; a++) {
    const ra = a * f;
    const base = a * m - (a * (a + 1)) / 2 - a - 1;
    let b = a + 1;
    // Each F_a value feeds four products; four independent sums.
    for (; b + 3 < m; b += 4) {
      const r0 = b * f;
      const r1 = r0 + f;
      const r2 = r1 + f;
      const r3 = r2 + f;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let k = 0; k < f; k++) {
        const x = F[ra + k];
        s0 += x * F[r0 + k];
        s1 += x * F[r1 + k];
        s2 += x * F[r2 + k];
        s3 += x * F[r3 + k];
      }
      out[base + b] += s0;
      out[base + b + 1] += s1;
      out[base + b + 2] += s2;
      out[base + b + 3] += s3;
    }
    for (; b < m; b++) {
      const rb = b * f;
      let s0 = 0;
      for (let k = 0; k < f; k++) s0 += F[ra + k] * F[rb + k];
      out[base + b] += s0;
    }
  }
}

/** Index of the pair (a, b) of member positions (a ≠ b) in the packed triangle of `cosinesWithin`. */
export function pairIndex(m: number, a: number, b: number): number {
  if (a > b) [a, b] = [b, a];
  return a * m - (a * (a + 1)) / 2 + (b - a - 1);
}

/** Full N×N cosine matrix (for tests, the CLI's diagnostics and small groups). */
export function cosineMatrix(texts: readonly string[]): Float64Array[] {
  const rows = tfidfRows(texts);
  const all = Array.from({ length: texts.length }, (_, i) => i);
  const packed = cosinesWithin(rows, all);
  const n = texts.length;
  const out = Array.from({ length: n }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    const ss = sumSquares(rows, i);
    out[i][i] = ss > 0 ? 1 : 0;
    for (let j = i + 1; j < n; j++) out[i][j] = out[j][i] = packed[pairIndex(n, i, j)];
  }
  return out;
}

function sumSquares(rows: TfidfRows, i: number): number {
  let s = 0;
  for (let k = rows.start[i]; k < rows.start[i + 1]; k++) s += rows.values[k] * rows.values[k];
  return s;
}
