// FNV-1a (32 bits): a stable, order-free key → number map (a seed per question, a worker per
// question, a bucket in the key index). The one copy in the code base; the Python package's
// shard bucket (python/consensus_lens/ray_pool.py, question_bucket) ports `fnv1a` and must give the same numbers.

const OFFSET = 0x811c9dc5;
const PRIME = 0x01000193;

/** FNV-1a of a string's UTF-16 code units. */
export function fnv1a(s: string): number {
  let h = OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), PRIME);
  return h >>> 0;
}

/** FNV-1a over bytes [from, to) of `b`. */
export function fnv1aBytes(b: Uint8Array, from = 0, to = b.length): number {
  let h = OFFSET;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], PRIME);
  return h >>> 0;
}
