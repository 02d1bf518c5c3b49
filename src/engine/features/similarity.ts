// Similarity: cos(h_i, h_j) of TF-IDF rows, only for the pairs the answer kernel keeps (within
// one answer class: A is block-diagonal, docs/contract.md#ec-and-core). In the WebAssembly kernel
// (ngrams.wat) when this thread has it, else in JavaScript (the reference); the two agree to
// rounding.
import type { TfidfRows } from './rows';
import { align64, growKernelMemory, loadNgramKernel } from './kernel';

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
