// The tie rule of every operator's label (docs/contract.md#operators), below the operators so that
// the per-group features (prepare.ts) and the theory read-outs use it without importing them.

/**
 * Index of the largest score, ties to the lowest index (docs/contract.md#operators: the class whose first member has
 * the lowest roll-out index; classes are ordered by first member). Scores equal up to rounding
 * (relative 1e-12) count as ties, so symmetric groups follow the rule rather than float noise.
 * Entries where `eligible` is false are skipped. Returns -1 when nothing is eligible.
 */
export function argmaxFirst(scores: ArrayLike<number>, eligible?: (k: number) => boolean): number {
  let best = -1;
  let bestScore = -Infinity;
  for (let k = 0; k < scores.length; k++) {
    if (eligible && !eligible(k)) continue;
    const s = scores[k];
    if (best < 0 || s > bestScore + 1e-12 * Math.max(1, Math.abs(bestScore))) {
      best = k;
      bestScore = s;
    }
  }
  return best;
}
