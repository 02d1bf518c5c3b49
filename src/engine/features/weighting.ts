// Weighting: raw term counts → TF-IDF with scikit-learn's smooth idf, rows L2-normalised
// (docs/contract.md#ec-and-core, step 1). The kernel's counting path weighs in WebAssembly with
// the same idf table (`idfOfDf`), bit for bit.
import type { TfidfRows } from './rows';

/** idf = ln((1+N)/(1+df)) + 1 depends on df alone (1..N): one logarithm per possible df, not one per term. */
export function idfOfDf(n: number, out: Float64Array = new Float64Array(n + 1)): Float64Array {
  for (let c = 1; c <= n; c++) out[c] = Math.log((1 + n) / (1 + c)) + 1;
  return out;
}

/** idf weighting and L2 normalisation of raw counts, in place: the same rows, now TF-IDF. */
export function weigh(rows: TfidfRows): TfidfRows {
  const { n, start, terms, values, df } = rows;
  const vocab = rows.vocabularySize;
  const byDf = idfOfDf(n);
  const idf = new Float64Array(vocab);
  for (let t = 0; t < vocab; t++) idf[t] = byDf[df[t]];
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
  return rows;
}
