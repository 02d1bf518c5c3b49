// The interchange structure of the reasoning vectors (docs/contract.md#ec-and-core, step 1):
// counting (counting.ts) fills it with raw term counts, weighting (weighting.ts) turns the counts
// into L2-normalised TF-IDF values in place, similarity (similarity.ts) reads it.

/**
 * Sparse rows over one group's vocabulary: row r holds terms[start[r]..start[r+1]) with their
 * values — raw counts out of counting, L2-normalised TF-IDF after weighting.
 */
export interface TfidfRows {
  n: number;
  start: Int32Array;
  terms: Int32Array;
  values: Float64Array;
  vocabularySize: number;
  /** Document frequency of each term (first `vocabularySize` entries). */
  df: Int32Array;
}

/** Index of the pair (a, b) of member positions (a ≠ b) in the packed triangle of `cosinesWithin`. */
export function pairIndex(m: number, a: number, b: number): number {
  if (a > b) [a, b] = [b, a];
  return a * m - (a * (a + 1)) / 2 + (b - a - 1);
}
