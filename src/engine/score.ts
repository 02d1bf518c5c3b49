// Scoring one prepared group with a set of operators: the results, why the others could not run,
// the theory read-outs, and the reward-mismatch check of docs/contract.md#grpo-view.

import type { PreparedGroup } from './prepare';
import { resolveParams, type Params } from './params';
import { OPERATORS, configuredOperatorOf, operatorSpec, statedOperatorOf, type RunContext } from './operators/registry';
import type { OperatorId, OperatorResult } from './operators/result';
import { ADVANTAGE_FORMULAS, frameworkAdvantages, rewardMismatches, type AdvantageFormula } from './grpo';
import { theoryReadout, type TheoryReadout } from './theory';

export interface ScoreRequest {
  /** Operators to run; default: every operator the group's data allows. */
  operators?: readonly OperatorId[];
  params?: Partial<Params>;
  /** The operator the training run was configured with, for the reward-mismatch check (default majority, TTRL). */
  configuredOperator?: OperatorId;
}

export interface RewardMismatch {
  operator: OperatorId;
  indices: number[];
  logged: number[];
  expected: number[];
}

export interface GroupScore {
  run?: string;
  step: number;
  questionId: string;
  n: number;
  params: Params;
  results: Partial<Record<OperatorId, OperatorResult>>;
  /** Operators that could not run on this group, with the reason. */
  unavailable: Partial<Record<OperatorId, string>>;
  analysis: TheoryReadout & {
    /** Whether CoRE's pseudo-label differs from the vote's (null when either did not run). */
    overturn: boolean | null;
  };
  /** Present when the log holds the rewards the training used. */
  rewardMismatch?: RewardMismatch;
  /**
   * When rewards are logged but no operator is named (neither by the user nor in the log): the
   * operators that ran whose rewards equal the logged ones (|Δ| ≤ 1e-6), in registry order; no
   * mismatch is reported against an assumed operator.
   */
  rewardMatches?: OperatorId[];
  /** The trainer's formula the advantages follow, when the log's format names the trainer and no advantage parameter was given. */
  advantageFormula?: AdvantageFormula;
  /** The advantages the trainer logged, when the log has them: what trained, shown before ours. */
  loggedAdvantages?: (number | null)[];
}

/**
 * One operator's result exactly as `scoreGroup` computes it (the same availability rule, the same
 * run), without the theory read-outs, the framework's advantage formula and the mismatch check:
 * what a re-score or a sweep reads (label, gate, rewards). undefined when the operator cannot run.
 */
export function runOperator(g: PreparedGroup, id: OperatorId, p: Params, ctx?: RunContext): OperatorResult | undefined {
  const spec = operatorSpec(id);
  if (!spec) throw new RangeError(`unknown operator "${id}"`);
  if (g.n === 0 || spec.unavailable(g, ctx, p)) return undefined;
  return spec.run(g, p, ctx);
}

export function scoreGroup(g: PreparedGroup, req: ScoreRequest = {}, ctx?: RunContext): GroupScore {
  const p = resolveParams(req.params);
  const ids = req.operators ?? OPERATORS.map((o) => o.id);
  const results: Partial<Record<OperatorId, OperatorResult>> = {};
  const unavailable: Partial<Record<OperatorId, string>> = {};
  for (const id of ids) {
    const spec = operatorSpec(id);
    if (!spec) throw new RangeError(`unknown operator "${id}"`);
    const why = g.n === 0 ? 'empty group' : spec.unavailable(g, ctx, p);
    if (why) {
      unavailable[id] = why;
      continue;
    }
    results[id] = spec.run(g, p, ctx);
  }
  // The GRPO view follows the trainer that wrote the log (its epsilon, its baseline), unless the
  // advantage parameters were set explicitly.
  const formula = g.framework && req.params?.advEps === undefined && req.params?.advScale === undefined ? ADVANTAGE_FORMULAS[g.framework] : undefined;
  if (formula) for (const r of Object.values(results)) r!.advantages = frameworkAdvantages(r!.rewards, formula);
  const core = results.core;
  const vote = results.majority;
  const score: GroupScore = {
    run: g.run,
    step: g.step,
    questionId: g.questionId,
    n: g.n,
    params: p,
    results,
    unavailable,
    analysis: { ...theoryReadout(g, p), overturn: core && vote && core.labelClass >= 0 && vote.labelClass >= 0 ? core.labelClass !== vote.labelClass : null },
  };
  if (formula) score.advantageFormula = formula;
  if (g.loggedAdvantages) score.loggedAdvantages = g.loggedAdvantages;
  const stated = statedOperatorOf(g, req.configuredOperator);
  if (g.loggedRewards.some((r) => r !== null) && !stated) {
    score.rewardMatches = OPERATORS.filter((o) => results[o.id] && rewardMismatches(g.loggedRewards, results[o.id]!.rewards).indices.length === 0).map((o) => o.id);
  } else if (g.loggedRewards.some((r) => r !== null)) {
    const configured = configuredOperatorOf(g, req.configuredOperator);
    const spec = operatorSpec(configured)!;
    const runnable = g.n > 0 && !spec.unavailable(g, ctx, p) && (g.hasReasoning || !spec.needs.includes('text'));
    // with the run's context: MS-TTRL's rewards depend on its outcome cache (docs/contract.md#ms-ttrl)
    const r = results[configured] ?? (runnable ? spec.run(g, p, ctx) : undefined);
    if (r) score.rewardMismatch = { operator: configured, ...rewardMismatches(g.loggedRewards, r.rewards) };
  }
  return score;
}

const round = (x: number): number | null => (Number.isFinite(x) ? x : null);
const list = (a: ArrayLike<number>): (number | null)[] => Array.from(a, round);

/** One operator's result in the wire shape of docs/contract.md#command-line. */
export function resultToJson(r: OperatorResult): Record<string, unknown> {
  const o: Record<string, unknown> = { label: r.label, rewards: list(r.rewards), gate: round(r.gate), advantages: list(r.advantages) };
  if (r.mass) {
    o.mass = list(r.mass);
    o.support = r.support;
    o.iterations = r.iterations;
  }
  if (r.confidence) o.confidence = r.confidence;
  if (r.approximation) o.approximation = r.approximation;
  o.loss_weight = round(r.lossWeight);
  if (r.outcomes) o.outcomes = r.outcomes.map((x) => ({ state: x.state, pass_rate: round(x.passRate), checked: x.checked }));
  return o;
}

/** The JSON line `score` writes for a group (docs/contract.md#command-line), with the read-outs after the required keys. */
export function scoreToJson(s: GroupScore): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  for (const [id, r] of Object.entries(s.results)) results[id] = resultToJson(r!);
  const a = s.analysis;
  const summary = (c: typeof a.plurality) => (c ? { answer: c.answer, size: c.size, coherence: c.coherence, confidence: round(c.confidence) } : null);
  const out: Record<string, unknown> = { step: s.step, question_id: s.questionId, n: s.n, results };
  // A verl folder with rollout/ and validation/ dumps holds two runs: name the run when known.
  if (s.run !== undefined) out.run = s.run;
  if (Object.keys(s.unavailable).length) out.unavailable = s.unavailable;
  out.analysis = {
    regime: a.regime,
    majority_ratio: round(a.majorityRatio),
    overturn: a.overturn,
    plurality: summary(a.plurality),
    runner_up: summary(a.runnerUp),
    outnumbering: a.outnumbering,
    coherence_advantage: a.coherenceAdvantage,
    vote_bar: a.voteBar,
    confidence_bar: a.confidenceBar,
    recovery_threshold: a.threshold,
    recovery_margin: a.margin,
  };
  if (s.rewardMismatch) out.reward_mismatch = s.rewardMismatch;
  if (s.advantageFormula) out.advantage_formula = { framework: s.advantageFormula.framework, eps: s.advantageFormula.eps, std: s.advantageFormula.std };
  if (s.loggedAdvantages) out.logged_advantages = s.loggedAdvantages;
  return out;
}
