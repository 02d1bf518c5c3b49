// Reasoning vectors h_i (SPEC §4.3 step 1): character 4-gram TF-IDF fitted on one group's
// responses, with scikit-learn's exact semantics (TfidfVectorizer(analyzer='char',
// ngram_range=(4,4)), defaults otherwise):
//   lowercase (str.lower) → every run of two or more whitespace characters (Python's `\s`) becomes
//   one space → n-grams over code points → raw counts → idf = ln((1+N)/(1+df)) + 1 → L2 rows.
//
// Speed matters (a group is 64 × ~2 KB): code points are mapped to a small per-group alphabet so
// a 4-gram is one exact integer key (a·S³ + b·S² + c·S + d < 2⁵³), counted in an open-addressing
// table instead of a string-keyed Map. Only the cosines the answer kernel keeps (within-class
// pairs) are ever computed.

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
}

// Scratch buffers reused across groups (the engine is single-threaded per worker thread).
let bmpIds = new Int32Array(65536).fill(-1);
let tableKeys = new Float64Array(1 << 15);
let tableIds = new Int32Array(1 << 15).fill(-1);
let dense = new Float64Array(1 << 14);
let classDf = new Int32Array(1 << 14);
let classTerms = new Int32Array(1 << 16);
let classValues = new Float64Array(1 << 16);

function ensureTable(capacity: number): void {
  if (tableKeys.length < capacity) {
    tableKeys = new Float64Array(capacity);
    tableIds = new Int32Array(capacity);
  }
  tableIds.fill(-1, 0, capacity);
}

/** Fits TF-IDF on `texts` (one group) and returns the L2-normalised rows. */
export function tfidfRows(texts: readonly string[]): TfidfRows {
  return countSmallAlphabet(texts) ?? countGeneral(texts.map(normaliseForNgrams));
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

// Scratch for the fused path: the hash table holds four ints per entry (key, term id, last
// document seen, slot of the term in that document's row), so counting a 4-gram touches one
// cache line; `termDf` grows with the vocabulary. Reset per group.
let smallTable = new Int32Array(4 << 12);
let termDf: Int32Array<ArrayBuffer> = new Int32Array(1 << 12);
let rowTerms = new Int32Array(1 << 16);
let rowCounts = new Float64Array(1 << 16);

/**
 * The common case, fused into one pass per document: at most 256 distinct BMP code points in the
 * group (no surrogates), so a 4-gram is one 32-bit key of four 8-bit ids, counted in an
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
          // Grow and rehash; the entry of this 4-gram moves, so find it again below.
          const old = table;
          const oldCap = cap;
          bits++;
          cap <<= 1;
          table = new Int32Array(4 * cap).fill(-1);
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
  const idf = new Float64Array(vocab);
  for (let t = 0; t < vocab; t++) idf[t] = Math.log((1 + n) / (1 + df[t])) + 1;
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
  return { n, start, terms, values, vocabularySize: vocab };
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
  const m = members.length;
  const out = new Float64Array((m * (m - 1)) / 2);
  if (m < 2) return out;
  const V = rows.vocabularySize;
  if (classDf.length < V) classDf = new Int32Array(Math.max(V, classDf.length * 2));
  const { start, terms, values } = rows;
  // A term held by only one member of the class adds exactly 0 to every dot product: keep only
  // the terms shared within the class (with real text about half of them), renumbered densely so
  // the scatter array stays small enough for the L1 cache.
  const df = classDf;
  let total = 0;
  for (const i of members) {
    for (let k = start[i]; k < start[i + 1]; k++) df[terms[k]]++;
    total += start[i + 1] - start[i];
  }
  if (classTerms.length < total) {
    classTerms = new Int32Array(total);
    classValues = new Float64Array(total);
  }
  const cStart = new Int32Array(m + 1);
  const cTerms = classTerms;
  const cValues = classValues;
  // df[t] > 1 marks a shared term; its local id is stored as −(id + 1) once assigned.
  let shared = 0;
  let w = 0;
  for (let a = 0; a < m; a++) {
    const i = members[a];
    cStart[a] = w;
    for (let k = start[i]; k < start[i + 1]; k++) {
      const t = terms[k];
      let c = df[t];
      if (c === 1) continue;
      if (c > 1) c = df[t] = -(++shared);
      cTerms[w] = -c - 1;
      cValues[w++] = values[k];
    }
  }
  cStart[m] = w;
  for (const i of members) for (let k = start[i]; k < start[i + 1]; k++) df[terms[k]] = 0;

  if (dense.length < shared) dense = new Float64Array(Math.max(shared, dense.length * 2));
  const d = dense;
  let o = 0;
  for (let a = 0; a < m - 1; a++) {
    const s0 = cStart[a];
    const s1 = cStart[a + 1];
    for (let k = s0; k < s1; k++) d[cTerms[k]] = cValues[k];
    for (let b = a + 1; b < m; b++) {
      // Four partial sums: independent additions instead of one chain bound by add latency.
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      const e = cStart[b + 1];
      let k = cStart[b];
      for (; k + 3 < e; k += 4) {
        d0 += d[cTerms[k]] * cValues[k];
        d1 += d[cTerms[k + 1]] * cValues[k + 1];
        d2 += d[cTerms[k + 2]] * cValues[k + 2];
        d3 += d[cTerms[k + 3]] * cValues[k + 3];
      }
      for (; k < e; k++) d0 += d[cTerms[k]] * cValues[k];
      out[o++] = d0 + d1 + (d2 + d3);
    }
    for (let k = s0; k < s1; k++) d[cTerms[k]] = 0;
  }
  return out;
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
