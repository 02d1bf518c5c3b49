// The expression tree the LaTeX parser (latex.ts) builds and the evaluator (evaluate.ts) and the
// comparisons (equivalence.ts, typed.ts) read: a module of its own, so the evaluator does not import
// the parser that calls it.
import type { Rational } from './rational';

export type RelOp = '=' | '<' | '<=' | '>' | '>=' | '!=' | 'in';

export type Node =
  | { k: 'num'; v: Rational; dec: boolean; src: string }
  | { k: 'float'; v: number }
  | { k: 'const'; c: 'pi' | 'e' | 'i' | 'inf' }
  | { k: 'var'; name: string }
  | { k: 'neg'; x: Node }
  | { k: 'add'; a: Node; b: Node }
  | { k: 'sub'; a: Node; b: Node }
  /** a ± b (sign 1) or a ∓ b (sign -1); a is null for a leading ±. */
  | { k: 'pm'; a: Node | null; b: Node; sign: 1 | -1 }
  | { k: 'mul'; a: Node; b: Node; implicit?: boolean }
  | { k: 'div'; a: Node; b: Node }
  | { k: 'pow'; a: Node; b: Node }
  | { k: 'fn'; f: string; args: Node[] }
  /** Bracketed items: a single `( )` item is a grouping, otherwise a tuple or an interval. */
  | { k: 'group'; open: '(' | '['; close: ')' | ']'; items: Node[] }
  | { k: 'set'; items: Node[] }
  | { k: 'union'; items: Node[] }
  | { k: 'rel'; ops: RelOp[]; parts: Node[] }
  | { k: 'list'; items: Node[] }
  /** `a:b` (a ratio, a time of day written plainly, `V_1:V_2`). */
  | { k: 'ratio'; items: Node[] }
  | { k: 'matrix'; rows: Node[][] }
  | { k: 'base'; digits: string; base: string };
