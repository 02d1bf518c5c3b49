// The GRPO view (docs/contract.md#grpo-view): what actually trains on an operator's rewards, with the advantage
// formula of the trainer that wrote the log when its format tells (docs/training-loop.md,
// "Advantages").
import type { Framework } from './types';

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

/** One trainer's GRPO advantage formula. */
export interface AdvantageFormula {
  framework: Framework;
  eps: number;
  /** 'unbiased': (R_i − mean)/(std + eps), std with n − 1; 'leave-one-out': NeMo RL's RLOO baseline. */
  std: 'unbiased' | 'leave-one-out';
}

export const ADVANTAGE_FORMULAS: Readonly<Record<Framework, AdvantageFormula>> = Object.freeze({
  // TRL GRPOTrainer (scale_rewards="group"): (r − mean) / (std + 1e-4), torch's unbiased std.
  trl: { framework: 'trl', eps: 1e-4, std: 'unbiased' },
  // verl compute_grpo_outcome_advantage (norm_adv_by_std_in_grpo): epsilon 1e-6, unbiased std;
  // a group of one has mean 0 and std 1.
  verl: { framework: 'verl', eps: 1e-6, std: 'unbiased' },
  // NeMo RL GRPOAdvantageEstimator (use_leave_one_out_baseline, normalize_rewards): epsilon 1e-6.
  'nemo-rl': { framework: 'nemo-rl', eps: 1e-6, std: 'leave-one-out' },
});

/** The advantages `f`'s trainer computes from these rewards (in float64; the trainers use float32). */
export function frameworkAdvantages(rewards: ArrayLike<number>, f: AdvantageFormula): Float64Array {
  const n = rewards.length;
  if (f.std === 'unbiased') {
    if (n === 1 && f.framework === 'verl') return Float64Array.of(rewards[0] / (1 + f.eps));
    return grpoAdvantages(rewards, f.eps);
  }
  // NeMo RL calculate_baseline_and_std_per_prompt: b_i is the mean of the other n − 1 rewards and
  // the std is theirs (population form, from the mean of their squares); a group with at most
  // one roll-out gets baseline = reward; a zero std leaves r − b unscaled.
  const out = new Float64Array(n);
  if (n < 2) return out;
  let s = 0;
  let q = 0;
  for (let i = 0; i < n; i++) {
    s += rewards[i];
    q += rewards[i] * rewards[i];
  }
  for (let i = 0; i < n; i++) {
    const b = (s - rewards[i]) / (n - 1);
    const sq = (q - rewards[i] * rewards[i]) / (n - 1);
    const v = sq - b * b;
    const std = v > 0 ? Math.sqrt(v) : 0;
    out[i] = std > 0 ? (rewards[i] - b) / (std + f.eps) : rewards[i] - b;
  }
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
