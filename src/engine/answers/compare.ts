// FIRST CUT of the equivalence (SPEC §3.2): normalised strings and exact numeric values.
// Replaced by the typed symbolic comparison in the next commits.
import { eq, parseDecimal, rat, div, type Rational } from './rational';

export interface SideInfo {
  normalised: string;
  type: string;
  rewrites: string[];
}

export interface Comparison {
  equal: boolean;
  reason: string;
  left: SideInfo;
  right: SideInfo;
  timedOut?: boolean;
}

function normalise(s: string): SideInfo {
  const rewrites: string[] = [];
  let t = s.replace(/\u2212/g, '-').trim();
  const step = (name: string, re: RegExp, by: string) => {
    const next = t.replace(re, by);
    if (next !== t) {
      rewrites.push(name);
      t = next;
    }
  };
  step('math delimiters', /^\$+|\$+$/g, '');
  step('\\left/\\right', /\\left|\\right/g, '');
  step('\\dfrac/\\tfrac/\\cfrac -> \\frac', /\\[dtc]frac/g, '\\frac');
  step('\\text{} unwrapped', /\\(?:text|mathrm|textnormal)\{([^{}]*)\}/g, '$1');
  step('thousands separators', /(\d)(?:,|\{,\})(?=\d{3}(?!\d))/g, '$1');
  step('\\$ removed', /\\\$/g, '');
  step('trailing punctuation', /[.]+$/g, '');
  step('spaces', /\s+/g, '');
  step('x= assignment', /^[A-Za-z]=/, '');
  return { normalised: t, type: 'text', rewrites };
}

function exactValue(s: string): Rational | null {
  const d = parseDecimal(s);
  if (d) return d;
  const f = /^(-?)\\frac\{?(\d+)\}?\{?(\d+)\}?$/.exec(s) ?? /^(-?)(\d+)\/(\d+)$/.exec(s);
  if (f) {
    const r = div(rat(BigInt(f[2]!)), rat(BigInt(f[3]!)));
    return r && (f[1] === '-' ? rat(-r.n, r.d) : r);
  }
  return null;
}

export function compareAnswers(a: string, b: string): Comparison {
  const left = normalise(a);
  const right = normalise(b);
  const va = exactValue(left.normalised);
  const vb = exactValue(right.normalised);
  if (va && vb) {
    left.type = right.type = 'number';
    const equal = eq(va, vb);
    return { equal, reason: equal ? 'equal exact rationals' : 'different exact rationals', left, right };
  }
  const equal = left.normalised.toLowerCase() === right.normalised.toLowerCase();
  return { equal, reason: equal ? 'same normalised text' : 'different normalised text', left, right };
}
