// Seeded synthetic roll-outs: reasoning-like text, boxed answers, confidences, verification and
// outcome checks. Shared by the tests, the benchmarks and the demo-run generator, so every
// figure in the repo can be regenerated from a seed.

// mulberry32, the generator the run-health analysis uses too.
export { rng } from '../src/engine';

const WORDS = (
  'we first note that the equation can be rewritten as follows so substituting gives then ' +
  'factor both sides dividing by the common term yields hence the sum of the roots equals ' +
  'consider the case where the expression is positive otherwise it is negative therefore ' +
  'by symmetry the product simplifies and the remaining terms cancel which leaves us with ' +
  'checking the boundary values confirms the result applying the formula for the area the ' +
  'triangle has sides and the angle between them is so the law of cosines gives us'
).split(' ');

const MATH = ['x^2 + 2x + 1 = 0', '\\frac{a}{b} = \\frac{3}{4}', 'n(n+1)/2', '\\sqrt{2}\\cdot\\sqrt{8} = 4', '2^{10} = 1024', 'a + b = 7', '(x-1)(x+3)', '\\binom{6}{2} = 15', 'y = mx + c', '3 \\times 4 = 12'];

/** A token of model arithmetic: numbers, variables and small LaTeX expressions with fresh digits. */
function arithmetic(r: () => number): string {
  const int = () => String(Math.floor(r() ** 2 * 10000));
  const v = 'abcnmxyzk'[Math.floor(r() * 9)];
  switch (Math.floor(r() * 6)) {
    case 0:
      return `$${int()}${v} + ${int()} = ${int()}$`;
    case 1:
      return `\\frac{${int()}}{${int()}}`;
    case 2:
      return `${int()} \\times ${int()} = ${int()}`;
    case 3:
      return `$${v}_{${int()}} = ${int()}.${int()}$`;
    case 4:
      return `(${int()}, ${int()})`;
    default:
      return `${v}^{${int()}} - ${int()}`;
  }
}

/**
 * A reasoning text of about `bytes` characters drawn from a path-specific vocabulary. `rich`
 * mixes in fresh numbers and expressions, as real model output has (more distinct 4-grams):
 * the benchmarks use it.
 */
export function reasoning(r: () => number, bytes: number, path: number, rich = false): string {
  const parts: string[] = [];
  let len = 0;
  // Each "derivation path" prefers a different slice of the vocabulary, so roll-outs that follow
  // the same path share more n-grams than roll-outs that don't.
  const offset = (path * 7) % WORDS.length;
  while (len < bytes) {
    const s = rich && r() < 0.15
      ? arithmetic(r)
      : r() < 0.15
        ? `$${MATH[(offset + Math.floor(r() * 4)) % MATH.length]}$`
        : WORDS[(offset + Math.floor(r() * r() * WORDS.length)) % WORDS.length];
    parts.push(s);
    len += s.length + 1;
    if (r() < 0.08) {
      parts.push('\n\n');
      len += 2;
    }
  }
  return parts.join(' ');
}

export interface SynthRollout {
  response: string;
  answer?: string;
  mean_logprob?: number;
  verification?: { valid?: boolean; tool_output?: string };
  sample_idx?: number;
}

export interface ClassPlan {
  /** The boxed answer, '' for an empty box, null for no answer at all (truncated). */
  answer: string | null;
  count: number;
  /** Mean log-prob of this class's roll-outs (before noise). */
  confidence?: number;
  /** Derivation path id: roll-outs of one path share vocabulary. */
  path?: number;
  /** Same text for every member (an identical-text clique). */
  identical?: boolean;
  verified?: boolean;
}

export interface GroupPlanOptions {
  bytes?: number;
  /** Draws each roll-out's length (overrides `bytes`): e.g. lognormal lengths of reasoning models. */
  lengths?: () => number;
  withConfidence?: boolean;
  withVerification?: boolean;
  /** Put the answer in the `answer` field instead of a \boxed{} in the text. */
  preExtracted?: boolean;
  shuffle?: boolean;
  /** Realistic texts with fresh numbers and expressions (see `reasoning`). */
  rich?: boolean;
}

/** The roll-outs of one group following a plan of answer classes. */
export function synthRollouts(r: () => number, plan: ClassPlan[], opts: GroupPlanOptions = {}): SynthRollout[] {
  const bytes = opts.bytes ?? 400;
  const out: SynthRollout[] = [];
  plan.forEach((c, k) => {
    const length = () => (opts.lengths ? opts.lengths() : bytes);
    const shared = c.identical ? reasoning(r, length(), c.path ?? k, opts.rich) : '';
    for (let j = 0; j < c.count; j++) {
      const body = c.identical ? shared : reasoning(r, length(), c.path ?? k, opts.rich);
      const tail = c.answer === null ? ' and so the value must be \\boxed{' : ` so the final answer is \\boxed{${c.answer}}.`;
      const ro: SynthRollout = { response: opts.preExtracted ? body : body + tail };
      if (opts.preExtracted && c.answer !== null) ro.answer = c.answer;
      if (opts.withConfidence !== false) ro.mean_logprob = Number(((c.confidence ?? -0.4) + (r() - 0.5) * 0.1).toFixed(6));
      if (opts.withVerification) ro.verification = { valid: c.verified ?? false };
      out.push(ro);
    }
  });
  if (opts.shuffle !== false) {
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
  }
  out.forEach((ro, i) => (ro.sample_idx = i));
  return out;
}

/** A random plan: a few answer classes with random sizes summing to n. */
export function randomPlan(r: () => number, n: number, answers = ['12', '15', '7', '\\frac{1}{2}', '42', '3\\sqrt{2}']): ClassPlan[] {
  const k = 1 + Math.floor(r() * Math.min(answers.length, n));
  const sizes = new Array(k).fill(0);
  for (let i = 0; i < n; i++) sizes[Math.floor(r() ** 1.5 * k)]++;
  return sizes.map((count, c) => ({ answer: answers[c], count, confidence: -0.2 - r(), path: Math.floor(r() * 5) })).filter((c) => c.count > 0);
}
