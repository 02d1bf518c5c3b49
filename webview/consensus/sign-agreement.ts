// Consensus against confidence on one question: which roll-outs the two rewards push in opposite
// directions. Pure (no DOM): the panel and its tests import it. The advantages are the host's
// (QuestionView: each operator's GRPO advantage, docs/contract.md#grpo-view); this only compares
// their signs.
import { OPERATOR_FAMILIES, type OperatorFamily, type OperatorId, type QuestionView, type RolloutRow } from '../../src/protocol/messages';

/** |A| at or below this is no push either way (the engine's advantages of a tied group are exact zeros, or float noise). */
export const ZERO_ADVANTAGE = 1e-12;

/** Whether two advantages push the roll-out in opposite directions (a zero pushes neither way). */
export function oppositeSigns(a: number | null | undefined, b: number | null | undefined): boolean {
  if (typeof a !== 'number' || typeof b !== 'number' || !Number.isFinite(a) || !Number.isFinite(b)) return false;
  if (Math.abs(a) <= ZERO_ADVANTAGE || Math.abs(b) <= ZERO_ADVANTAGE) return false;
  return a > 0 !== b > 0;
}

/** The roll-outs (indices, in the view's order) whose advantages under `a` and `b` have opposite signs. */
export function signDisagreements(rows: readonly RolloutRow[], a: OperatorId, b: OperatorId): number[] {
  return rows.filter((r) => oppositeSigns(r.advantages[a], r.advantages[b])).map((r) => r.index);
}

/** The operators of a family that ran on the question, in the list's order. */
export function availableOf(v: QuestionView, family: OperatorFamily): OperatorId[] {
  return v.operators.filter((o) => o.available && OPERATOR_FAMILIES[o.operator] === family).map((o) => o.operator);
}

/** The pair shown: the user's pick where it ran, else the configured operator (consensus) or the first that ran. */
export function pickPair(v: QuestionView, picked: Partial<Record<OperatorFamily, OperatorId>>): { consensus?: OperatorId; confidence?: OperatorId } {
  const choose = (family: OperatorFamily, preferred: OperatorId[]): OperatorId | undefined => {
    const ran = availableOf(v, family);
    return [picked[family], ...preferred].find((o): o is OperatorId => !!o && ran.includes(o)) ?? ran[0];
  };
  return { consensus: choose('consensus', [v.configuredOperator, 'majority']), confidence: choose('confidence', [v.configuredOperator]) };
}
