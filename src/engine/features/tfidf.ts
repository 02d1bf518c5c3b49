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

// Scratch buffers reused across groups (the engine is single-threaded per worker).
let bmpIds = new Int32Array(65536).fill(-1);
let tableKeys = new Float64Array(1 << 15);
let tableIds = new Int32Array(1 << 15).fill(-1);
let dense = new Float64Array(1 << 14);

function ensureTable(capacity: number): void {
  if (tableKeys.length < capacity) {
    tableKeys = new Float64Array(capacity);
    tableIds = new Int32Array(capacity);
  }
  tableIds.fill(-1, 0, capacity);
}

/** Fits TF-IDF on `texts` (one group) and returns the L2-normalised rows. */
export function tfidfRows(texts: readonly string[]): TfidfRows {
  const n = texts.length;
  // 1. Code points → per-group alphabet ids.
  const astral = new Map<number, number>();
  const touched: number[] = [];
  let alphabet = 0;
  const seqs: Int32Array[] = new Array(n);
  let totalGrams = 0;
  for (let d = 0; d < n; d++) {
    const s = normaliseForNgrams(texts[d]);
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
    seqs[d] = ids.subarray(0, len);
    if (len >= NGRAM) totalGrams += len - NGRAM + 1;
  }
  for (const cp of touched) bmpIds[cp] = -1;

  // 2. Count 4-grams. Keys are exact integers while S⁴ < 2⁵³ (S ≤ 9741 distinct code points);
  // beyond that (never seen in practice) fall back to string keys.
  const S = Math.max(alphabet, 1);
  if (S > 9741) return tfidfRowsSlow(seqs);
  const S2 = S * S;
  const S3 = S2 * S;
  let capacity = 1 << 12;
  while (capacity < totalGrams * 2 && capacity < 1 << 24) capacity <<= 1;
  ensureTable(capacity);
  const mask = capacity - 1;
  let vocab = 0;
  let df = new Int32Array(Math.min(totalGrams, capacity >> 1) + 1);
  let lastDoc = new Int32Array(df.length).fill(-1);
  let slotInDoc = new Int32Array(df.length);
  const start = new Int32Array(n + 1);
  const termsAll = new Int32Array(totalGrams);
  const countsAll = new Float64Array(totalGrams);
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
      // Hash from the four ids (exact key compared on probe).
      let h = (Math.imul(ids[p - 3], 0x9e3779b1) ^ Math.imul(ids[p - 2], 0x85ebca77) ^ Math.imul(ids[p - 1], 0xc2b2ae3d) ^ Math.imul(ids[p], 0x27d4eb2f)) >>> 0;
      h = (h ^ (h >>> 15)) & mask;
      let term: number;
      for (;;) {
        const t = tableIds[h];
        if (t < 0) {
          term = tableIds[h] = vocab++;
          tableKeys[h] = key;
          if (vocab >= df.length) {
            const grow = (a: Int32Array, fill?: number) => {
              const b = new Int32Array(a.length * 2);
              if (fill !== undefined) b.fill(fill);
              b.set(a);
              return b;
            };
            df = grow(df);
            lastDoc = grow(lastDoc, -1);
            slotInDoc = grow(slotInDoc);
          }
          break;
        }
        if (tableKeys[h] === key) {
          term = t;
          break;
        }
        h = (h + 1) & mask;
      }
      if (lastDoc[term] !== d) {
        lastDoc[term] = d;
        df[term]++;
        slotInDoc[term] = w;
        termsAll[w] = term;
        countsAll[w++] = 1;
      } else {
        countsAll[slotInDoc[term]]++;
      }
    }
  }
  start[n] = w;
  return finish(n, start, termsAll.subarray(0, w), countsAll.subarray(0, w), df, vocab);
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
  if (dense.length < rows.vocabularySize) dense = new Float64Array(Math.max(rows.vocabularySize, dense.length * 2));
  const { start, terms, values } = rows;
  let o = 0;
  for (let a = 0; a < m - 1; a++) {
    const i = members[a];
    const s0 = start[i];
    const s1 = start[i + 1];
    for (let k = s0; k < s1; k++) dense[terms[k]] = values[k];
    for (let b = a + 1; b < m; b++) {
      const j = members[b];
      let dot = 0;
      for (let k = start[j], e = start[j + 1]; k < e; k++) dot += dense[terms[k]] * values[k];
      out[o++] = dot;
    }
    for (let k = s0; k < s1; k++) dense[terms[k]] = 0;
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
