// The WebAssembly kernel of the reasoning vectors (ngrams.wat): one module instance (and one
// linear memory) per thread, created on first use (see ../wasm.ts). Counting uses its `count`,
// similarity its `classify` and `cosines`; rows it counted live in its memory.
import { ngramsWasmBytes } from './ngrams-wasm';
import { instantiateKernel, WASM_PAGE, type WasmMemory } from '../wasm';
import type { TfidfRows } from './rows';

export type CountKernel = (
  n: number,
  pAt: number,
  pIdfOfDf: number,
  pStart: number,
  pTerms: number,
  pValues: number,
  pDf: number,
  pMeta: number,
  pTable: number,
  pScratch: number,
  bits: number,
) => number;
type ClassifyKernel = (pDf: number, vocab: number, maxSparse: number, pCode: number) => number;
type CosinesKernel = (
  pStart: number,
  pTerms: number,
  pValues: number,
  pCode: number,
  D: number,
  k: number,
  pSizes: number,
  pMembers: number,
  pOut: number,
  pEntries: number,
  pList: number,
  pF: number,
) => void;
export interface NgramKernel {
  memory: WasmMemory;
  count: CountKernel;
  classify: ClassifyKernel;
  cosines: CosinesKernel;
}

/** undefined: not tried yet on this thread; null: unavailable (no WebAssembly, or it failed). */
let ngramKernel: NgramKernel | null | undefined;

export function loadNgramKernel(): NgramKernel | null {
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

/** Whether this thread counts ASCII groups in WebAssembly (loads the kernel on first call). */
export function ngramsWasmAvailable(): boolean {
  return loadNgramKernel() !== null;
}

export const align64 = (bytes: number): number => Math.ceil(bytes / 64) * 64;

/**
 * Grows the kernel's memory to at least `end` bytes (false when it cannot). Growing detaches
 * every view of the old memory: `rows`, when they are such views, are re-made on the new one.
 */
export function growKernelMemory(k: NgramKernel, end: number, rows: TfidfRows | null): boolean {
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
