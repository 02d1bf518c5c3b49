// Reasoning vectors h_i (docs/contract.md#ec-and-core, step 1): character 4-gram TF-IDF fitted on
// one group's responses, with scikit-learn's exact semantics (TfidfVectorizer(analyzer='char',
// ngram_range=(4,4)), defaults otherwise), in three stages as scikit-learn's text.py has them:
//   counting.ts   lowercase → whitespace runs → 4-grams over code points → raw counts and df
//   weighting.ts  idf = ln((1+N)/(1+df)) + 1, rows L2-normalised
//   similarity.ts within-class cosines
// with one interchange structure between them (rows.ts). All-ASCII groups (the common case) are
// counted and weighted in one call of the WebAssembly kernel (kernel.ts, ngrams.wat), which also
// computes the cosines of every group; the JavaScript paths stay as reference and fallback.
import type { TfidfRows } from './rows';
import { countAndWeighInKernel, countTerms } from './counting';
import { weigh } from './weighting';
import { cosinesWithin } from './similarity';
import { pairIndex } from './rows';

export { pairIndex, type TfidfRows } from './rows';
export { NGRAM, normaliseForNgrams, setNgramsWasmEnabled } from './counting';
export { ngramsWasmAvailable } from './kernel';
export { cosinesWithin, cosinesByClass, cosinesByClassJs, cosinesByClassWasm, setCosinesWasmEnabled } from './similarity';

/** Fits TF-IDF on `texts` (one group) and returns the L2-normalised rows. */
export function tfidfRows(texts: readonly string[]): TfidfRows {
  return countAndWeighInKernel(texts) ?? weigh(countTerms(texts));
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
