// What every operator returns (docs/contract.md#operators: label, rewards[N], gate, plus docs/contract.md#grpo-view).

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import { grpoAdvantages } from '../grpo';

import type { OperatorId } from './ids';

export type { OperatorId };

export interface OperatorResult {
  operator: OperatorId;
  /** The pseudo-label: the label class's first member's answer, or null. */
  label: string | null;
  /** Index into PreparedGroup.classes, -1 when there is no label. */
  labelClass: number;
  rewards: Float64Array;
  /** Question gate w_q (1 for the voting operators). */
  gate: number;
  /** GRPO advantages (docs/contract.md#grpo-view). */
  advantages: Float64Array;
  /** What multiplies this question's loss: the gate for ec/core, 1 otherwise. */
  lossWeight: number;
  /** Per class score the label was chosen by: count, weight sum, equilibrium mass, or pass rate. */
  classScores: Float64Array;
  /** Per roll-out vote or confidence weight, where the operator has one. */
  weights?: Float64Array;
  /** ec/core: the equilibrium x*, the dominant set σ = {i : x*_i > ρ}, the iteration count. */
  mass?: Float64Array;
  support?: number[];
  iterations?: number;
  /** core: whether confidence calibrated the graph ("missing": ran as ec, docs/contract.md#ec-and-core, step 3). */
  confidence?: 'used' | 'missing';
  /**
   * Present when the result is an approximation of the paper's value, saying of what: a confidence
   * computed from sampled-token log-probs instead of the full-vocabulary logits, or a similarity
   * other than the paper's embedding model. Views and the CLI show it; never dropped.
   */
  approximation?: string;
  /** empo: the group's semantic entropy −Σ p log p over its clusters (the gate opens below log N). */
  semanticEntropy?: number;
  /** novelty: each roll-out's novelty score after the per-group normalisation (docs/contract.md#novelty). */
  novelty?: Float64Array;
  /** msttrl: each class's state and pass rate. */
  outcomes?: { state: 'correct' | 'candidate' | 'wrong'; passRate: number; checked: boolean }[];
}

export { argmaxFirst } from '../argmax';

/** The result of an operator with gate 1 (every operator but EC/CoRE): label, rewards, GRPO view. */
export function gateOneResult(op: OperatorId, g: PreparedGroup, labelClass: number, rewards: Float64Array, classScores: Float64Array, p: Params): OperatorResult {
  return {
    operator: op,
    label: labelClass >= 0 ? g.classes[labelClass].answer : null,
    labelClass,
    rewards,
    gate: 1,
    advantages: grpoAdvantages(rewards, p.advEps, p.advScale),
    lossWeight: 1,
    classScores,
  };
}
