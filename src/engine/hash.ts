// FNV-1a (32 bits) of a string's UTF-16 code units: a stable, order-free key → number map (a seed
// per question, a worker per question). The one copy in the code base.
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
