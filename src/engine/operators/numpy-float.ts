// Float64 arithmetic as the authors' NumPy code rounds it, where a result sits on a threshold
// (EMPO's gate H < log N is decided by the last bit when every roll-out is a cluster of its own,
// docs/contract.md#empo): NumPy's pairwise summation, and a correctly rounded natural log (glibc's
// `log`, which NumPy and Python's `math.log` call; V8's `Math.log` may differ in the last bit).

/** Blocks of this many values are summed with eight accumulators (NumPy's PW_BLOCKSIZE). */
const PAIRWISE_BLOCK = 128;

function pairwiseSum(a: ArrayLike<number>, from: number, n: number): number {
  if (n < 8) {
    let s = 0;
    for (let i = 0; i < n; i++) s += a[from + i];
    return s;
  }
  if (n <= PAIRWISE_BLOCK) {
    const r = [a[from], a[from + 1], a[from + 2], a[from + 3], a[from + 4], a[from + 5], a[from + 6], a[from + 7]];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let k = 0; k < 8; k++) r[k] += a[from + i + k];
    const left = r[0] + r[1] + (r[2] + r[3]);
    const right = r[4] + r[5] + (r[6] + r[7]);
    let s = left + right;
    for (; i < n; i++) s += a[from + i];
    return s;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSum(a, from, half) + pairwiseSum(a, from + half, n - half);
}

/** NumPy's `x.sum()` of a contiguous 1-D float64 array (NumPy 2: the pairwise sum of all of it). */
export function numpySum(a: ArrayLike<number>): number {
  return pairwiseSum(a, 0, a.length);
}

// Double-double arithmetic (Dekker, Knuth): a value is hi + lo with |lo| ≤ ulp(hi)/2.
const SPLITTER = 134217729; // 2^27 + 1

function twoSum(a: number, b: number): [number, number] {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}

function twoProd(a: number, b: number): [number, number] {
  const p = a * b;
  const ta = SPLITTER * a;
  const ah = ta - (ta - a);
  const al = a - ah;
  const tb = SPLITTER * b;
  const bh = tb - (tb - b);
  const bl = b - bh;
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}

type DD = [number, number];

function ddAdd(x: DD, y: DD): DD {
  const [s, e] = twoSum(x[0], y[0]);
  const [h, l] = twoSum(s, e + x[1] + y[1]);
  return [h, l];
}

function ddMul(x: DD, y: DD): DD {
  const [p, e] = twoProd(x[0], y[0]);
  return twoSum(p, e + x[0] * y[1] + x[1] * y[0]);
}

function ddDiv(x: DD, y: DD): DD {
  const q1 = x[0] / y[0];
  const r = ddAdd(x, ddMul([-q1, 0], y));
  const q2 = r[0] / y[0];
  const r2 = ddAdd(r, ddMul([-q2, 0], y));
  const q3 = r2[0] / y[0];
  return ddAdd(twoSum(q1, q2), [q3, 0]);
}

/** ln 2 as a double-double. */
const LN2: DD = [Math.LN2, 2.3190468138462996e-17];

/**
 * The natural log of a positive finite x, correctly rounded: x = 2^e·m with m in [√½, √2),
 * ln m = 2·atanh(s), s = (m − 1)/(m + 1), summed in double-double to ~1e-32 before one rounding.
 */
export function logCorrectlyRounded(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) return Math.log(x);
  let e = Math.floor(Math.log2(x));
  let m = x / 2 ** e;
  // Math.log2 may be off by one near powers of two: bring m into [1, 2) exactly, then [√½, √2).
  while (m >= 2) {
    m /= 2;
    e++;
  }
  while (m < 1) {
    m *= 2;
    e--;
  }
  if (m > Math.SQRT2) {
    m /= 2;
    e++;
  }
  const s = ddDiv(twoSum(m, -1), twoSum(m, 1));
  const s2 = ddMul(s, s);
  let term: DD = s;
  let sum: DD = s;
  for (let k = 1; k < 40; k++) {
    term = ddMul(term, s2);
    const add = ddDiv(term, [2 * k + 1, 0]);
    sum = ddAdd(sum, add);
    if (Math.abs(add[0]) < 1e-34 * Math.abs(sum[0])) break;
  }
  const lnm = ddMul(sum, [2, 0]);
  const r = ddAdd(ddMul(LN2, [e, 0]), lnm);
  return r[0] + r[1];
}
