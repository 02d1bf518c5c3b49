// The GRPO view (docs/contract.md#grpo-view): what actually trains on an operator's rewards.

/**
 * A_i = (R_i − mean(R)) / (std(R) + eps) with the unbiased std, as verl's
 * compute_grpo_outcome_advantage; a group of one gets 0. scale "none" is Dr. GRPO: R_i − mean(R).
 */
export function grpoAdvantages(rewards: ArrayLike<number>, eps = 1e-6, scale: 'group' | 'none' = 'group'): Float64Array {
  const n = rewards.length;
  const out = new Float64Array(n);
  if (n < 2) return out;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += rewards[i];
  mean /= n;
  if (scale === 'none') {
    for (let i = 0; i < n; i++) out[i] = rewards[i] - mean;
    return out;
  }
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (rewards[i] - mean) ** 2;
  const std = Math.sqrt(ss / (n - 1));
  for (let i = 0; i < n; i++) out[i] = (rewards[i] - mean) / (std + eps);
  return out;
}

/** Roll-outs whose logged training reward differs from the operator's by more than 1e-6 (a reward bug). */
export function rewardMismatches(logged: readonly (number | null)[], rewards: ArrayLike<number>): { indices: number[]; logged: number[]; expected: number[] } {
  const indices: number[] = [];
  const got: number[] = [];
  const expected: number[] = [];
  for (let i = 0; i < logged.length; i++) {
    const r = logged[i];
    if (r === null) continue;
    if (Math.abs(r - rewards[i]) > 1e-6) {
      indices.push(i);
      got.push(r);
      expected.push(rewards[i]);
    }
  }
  return { indices, logged: got, expected };
}
