// Answer classes (SPEC §3.2): each answer joins the first existing class whose FIRST member it
// equals (no transitive chaining), in class-creation order; null answers get class -1.
import { compareCanonical, limits, type Comparison } from './compare';
import { budget, TimeoutError } from './evaluate';
import { canonicalise, textKey, type Canonical } from './typed';

export interface AnswerClass {
  /** The first member's answer. */
  answer: string;
  /** Roll-out indices, ascending. */
  members: number[];
}

export interface AnswerClasses {
  /** classOf[i] = index into `classes`, or -1 for a null answer. */
  classOf: Int32Array;
  classes: AnswerClass[];
}

/** A small LRU on Map insertion order. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly capacity: number) {}
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
  clear(): void {
    this.map.clear();
  }
}

/** Answers longer than this are not parsed (no real final answer is; SPEC §3.2 time bound). */
export const MAX_ANSWER_LENGTH = 2000;

const pairCache = new Lru<string, Comparison>(50_000);
const canonicalCache = new Lru<string, Canonical>(20_000);

/** Parse once per distinct string; a parse that exceeds the time budget reads as text. */
export function canonicalOf(a: string): Canonical {
  const hit = canonicalCache.get(a);
  if (hit) return hit;
  let c: Canonical;
  if (a.length > MAX_ANSWER_LENGTH) {
    c = asText(a, `longer than ${MAX_ANSWER_LENGTH} characters: compared as text`);
    canonicalCache.set(a, c);
    return c;
  }
  budget.start(limits.timeBudgetMs);
  try {
    c = canonicalise(a);
  } catch (e) {
    // Untrusted input: a parse that times out, exhausts the stack, or hits a bug reads as text.
    c = asText(a, e instanceof TimeoutError ? 'timed out while parsing: compared as text' : `could not parse (${(e as Error).message ?? String(e)}): compared as text`);
  } finally {
    budget.deadline = Infinity;
  }
  canonicalCache.set(a, c);
  return c;
}

function asText(a: string, why: string): Canonical {
  const t = a.trim();
  return { raw: a, normalised: t, rewrites: [why], type: 'text', readings: [{ value: { t: 'text', s: textKey(t) }, tag: 'plain' }], percent: false };
}

/** Drops all cached parses and pair results (tests, memory pressure). */
export function clearAnswerCaches(): void {
  pairCache.clear();
  canonicalCache.clear();
}

/** Symmetric key: the pair in code-unit order, joined by a separator that cannot be confused. */
function pairKey(a: string, b: string): string {
  return a < b ? `${a.length}:${a}\u0000${b}` : `${b.length}:${b}\u0000${a}`;
}

export function explainPair(a: string, b: string): Comparison {
  const key = pairKey(a, b);
  const hit = pairCache.get(key);
  if (hit) return a <= b ? hit : swapSides(hit);
  // Compute in canonical order so the result (and its symmetry) does not depend on argument order.
  const [x, y] = a <= b ? [a, b] : [b, a];
  const r = compareCanonical(canonicalOf(x), canonicalOf(y));
  pairCache.set(key, r);
  return a <= b ? r : swapSides(r);
}

function swapSides(r: Comparison): Comparison {
  return { ...r, left: r.right, right: r.left };
}

export function answersEqual(a: string, b: string): boolean {
  if (a === b) return true;
  return explainPair(a, b).equal;
}

export function formClasses(answers: (string | null)[]): AnswerClasses {
  const classOf = new Int32Array(answers.length).fill(-1);
  const classes: AnswerClass[] = [];
  // Identical strings short-circuit: one comparison per distinct string.
  const seen = new Map<string, number>();
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i];
    if (a === null || a === undefined) continue;
    let c = seen.get(a);
    if (c === undefined) {
      c = -1;
      for (let k = 0; k < classes.length; k++) {
        if (answersEqual(classes[k]!.answer, a)) {
          c = k;
          break;
        }
      }
      if (c < 0) {
        c = classes.length;
        classes.push({ answer: a, members: [] });
      }
      seen.set(a, c);
    }
    classOf[i] = c;
    classes[c]!.members.push(i);
  }
  return { classOf, classes };
}
