// What deterministic-budget.test.ts compares between runs and threads: every field of a verdict.
import { clearAnswerCaches, explainPair } from '../../src/engine/answers/classes';

export interface Verdict {
  equal: boolean;
  reason: string;
  rewrites: string;
  undecided: boolean;
  units: number | null;
}

/** Each pair decided once, caches cleared first (so every run does the same work from cold). */
export function verdicts(pairs: [string, string][]): Verdict[] {
  clearAnswerCaches();
  return pairs.map(([a, b]) => {
    const r = explainPair(a, b);
    return {
      equal: r.equal,
      reason: r.reason,
      rewrites: `${r.left.rewrites.join(';')} | ${r.right.rewrites.join(';')}`,
      undecided: r.undecided === true,
      units: r.units ?? null,
    };
  });
}
