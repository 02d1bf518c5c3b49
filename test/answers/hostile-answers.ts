// Answers that once hung or exhausted memory (docs/answers.md, "Work and size bounds"): nested
// sums, products of literal matrices, sums of big rational powers. Shared by the answer, score,
// serve and Python-client tests.
const M = '\\begin{pmatrix}1&1\\\\1&0\\end{pmatrix}';
const PRIMES = [3, 5, 7, 11, 13, 17, 19, 23];

export const HOSTILE_ANSWERS: Record<string, string> = {
  nestedSum2: '\\sum_{i=1}^{1000}\\sum_{j=1}^{1000} (i+j)',
  nestedSum3: '\\sum_{i=1}^{1000}\\sum_{j=1}^{1000}\\sum_{k=1}^{1000} (i+j+k)',
  matrixProduct: `\\prod_{k=1}^{40} ${M}`,
  bigPowers: PRIMES.map((p) => `\\frac{1}{${p}}^{5000}`).join('+'),
  bigPowers2: PRIMES.map((p) => `(\\frac{2}{${p}})^{3000}`).join('+'),
};
