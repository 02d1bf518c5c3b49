// Seeded randomness for the run-health analysis (permutation tests, roll-out subsampling): the
// same run gives the same numbers on every surface and every time (seeds: fnv1a of a question's
// key, src/util/hash.ts, so they do not depend on the order groups are read).

/** mulberry32: a small, fast 32-bit generator (scripts/synth.ts uses it too). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
