// Answer classes (docs/contract.md#answer-equivalence): each answer joins the first existing class whose FIRST member it
// equals (no transitive chaining), in class-creation order; null answers get class -1.
import { compareCanonical, type Comparison } from './equivalence';
import { asText, canonicalBounded, type Canonical } from './typed';

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

/**
 * A bounded cache with two generations: hits cost one or two Map lookups (no reordering, no
 * key building), and when the young generation fills up the old one is dropped whole.
 */
export class GenCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  constructor(private readonly capacity: number) {}
  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }
  set(key: K, value: V): void {
    if (this.young.size >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

/** Answers longer than this are not parsed (no real final answer is; docs/contract.md#answer-equivalence work bound). */
export const MAX_ANSWER_LENGTH = 2000;

const canonicalCache = new GenCache<string, Canonical>(10_000);
/** Pair results, keyed by the canonical (cached) answer of the smaller string, then the other. */
const pairCaches = new WeakMap<Canonical, Map<string, Comparison>>();
const MAX_PAIRS_PER_ANSWER = 512;

/** Parse once per distinct string; a parse over its work budget (or a size bound) reads as text. */
export function canonicalOf(a: string): Canonical {
  const hit = canonicalCache.get(a);
  if (hit) return hit;
  let c: Canonical;
  if (a.length > MAX_ANSWER_LENGTH) {
    c = asText(a, `longer than ${MAX_ANSWER_LENGTH} characters: compared as text`);
    canonicalCache.set(a, c);
    return c;
  }
  c = canonicalBounded(a);
  canonicalCache.set(a, c);
  return c;
}

/** Drops all cached parses and pair results (tests, memory pressure). */
export function clearAnswerCaches(): void {
  canonicalCache.clear(); // pair results hang off the canonical answers and go with them
}

export function explainPair(a: string, b: string): Comparison {
  // Compute in canonical order so the result (and its symmetry) does not depend on argument order.
  const [x, y] = a <= b ? [a, b] : [b, a];
  const cx = canonicalOf(x);
  let pairs = pairCaches.get(cx);
  let r = pairs?.get(y);
  if (!r) {
    r = compareCanonical(cx, canonicalOf(y));
    if (!pairs || pairs.size >= MAX_PAIRS_PER_ANSWER) pairCaches.set(cx, (pairs = new Map()));
    pairs.set(y, r);
  }
  return a <= b ? r : swapSides(r);
}

function swapSides(r: Comparison): Comparison {
  return { ...r, left: r.right, right: r.left };
}

export function answersEqual(a: string, b: string): boolean {
  if (a === b) return true;
  const ka = canonicalOf(a).exactKey;
  const kb = ka === undefined ? undefined : canonicalOf(b).exactKey;
  if (ka !== undefined && kb !== undefined) return ka === kb;
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
