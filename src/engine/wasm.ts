// The engine's WebAssembly kernels (replicator.wat, ngrams.wat) are loaded the same way: one
// instance per thread, created on first use, synchronously (the modules are small). Typed here by
// hand: the engine compiles against lib ES2022 (no DOM lib), which has no WebAssembly declarations.

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

export const WASM_PAGE = 65536;

/**
 * The exports of a kernel module, or null where it cannot run: no WebAssembly (e.g. `node
 * --jitless`), a runtime without 128-bit SIMD (validate() is false), or any failure. Callers then
 * use their TypeScript twin.
 */
export function instantiateKernel(bytes: () => Uint8Array): Record<string, unknown> | null {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wasm) return null;
  try {
    const b = bytes();
    if (!wasm.validate(b)) return null;
    return new wasm.Instance(new wasm.Module(b), {}).exports;
  } catch {
    return null;
  }
}
