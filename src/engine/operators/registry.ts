// The consensus operators' code: each entry of the operator list (`ids.ts`: id, names, paper,
// parameters, needs) with whether it can run on a given group (and why not) and how to run it.

import type { PreparedGroup } from '../prepare';
import type { NumericParam, Params } from '../params';
import type { OperatorResult } from './result';
import { OPERATOR_FAMILIES, OPERATOR_IDS, OPERATOR_LABELS, type OperatorFamily, type OperatorId } from './ids';
import { cisc, ciscUnavailable, majority, t3rl, t3rlUnavailable } from './vote';
import { equilibrium } from './equilibrium';
import { empo } from './empo';
import { entropyUnavailable, likelihood, likelihoodUnavailable, selfCertainty, selfCertaintyUnavailable, tokenEntropy } from './confidence-rewards';
import { novelty, noveltyUnavailable } from './novelty';
import { judgeOutcomes, msttrl, msttrlUnavailable, OutcomeCache, type OutcomeReplay } from './msttrl';

/** State carried across the groups of one run (MS-TTRL's outcome cache), one per threshold setting. */
export class RunContext {
  private readonly caches = new Map<string, OutcomeCache>();
  outcomeCache(p: Params): OutcomeCache {
    const key = `${p.tauLow}|${p.tauHigh}`;
    let c = this.caches.get(key);
    if (!c) this.caches.set(key, (c = new OutcomeCache(p.tauLow, p.tauHigh)));
    return c;
  }
  peekOutcomeCache(p: Params): OutcomeCache | undefined {
    return this.caches.get(`${p.tauLow}|${p.tauHigh}`);
  }
  /** A question's outcome cache as one string ('[]': nothing cached): what MS-TTRL of a group of it reads. */
  outcomeFingerprint(p: Params, questionId: string): string {
    return this.peekOutcomeCache(p)?.fingerprint(questionId) ?? '[]';
  }
  /** Feeds a group's outcome checks to the cache, as MS-TTRL scoring the group does (again: no change). */
  replayOutcomes(p: Params, g: OutcomeReplay): void {
    judgeOutcomes(this.outcomeCache(p), g, p);
  }
}

export function createRunContext(): RunContext {
  return new RunContext();
}

/**
 * What an operator needs from the log beyond answers: `confidence` the mean token log-prob,
 * `self-certainty` and `entropy` the per-roll-out values computed from the model's logits.
 */
export type OperatorNeed = 'text' | 'confidence' | 'verification' | 'outcome checks' | 'self-certainty' | 'entropy';

export interface OperatorSpec {
  readonly id: OperatorId;
  readonly label: string;
  /** consensus (rewards agreement with the group) or confidence (rewards the model's own certainty). */
  readonly family: OperatorFamily;
  /** Parameters that change this operator's result (beyond the GRPO view's advEps/advScale). */
  readonly params: readonly NumericParam[];
  /** What the log must hold for it, beyond answers. */
  readonly needs: readonly OperatorNeed[];
  /** Why it cannot run on this group, or null. */
  unavailable(g: PreparedGroup, ctx?: RunContext, p?: Params): string | null;
  run(g: PreparedGroup, p: Params, ctx?: RunContext): OperatorResult;
}

type OperatorCode = Pick<OperatorSpec, 'params' | 'needs' | 'unavailable' | 'run'>;

const CODE: Record<OperatorId, OperatorCode> = {
  majority: { params: [], needs: [], unavailable: () => null, run: (g, p) => majority(g, p) },
  cisc: { params: ['ciscTemp', 'tau'], needs: ['confidence'], unavailable: (g) => ciscUnavailable(g), run: (g, p) => cisc(g, p) },
  ec: { params: ['kappa', 'alpha', 'shift', 'eps', 'tmax'], needs: ['text'], unavailable: () => null, run: (g, p) => equilibrium('ec', g, p) },
  // Without confidence CoRE runs as EC and reports confidence: "missing" (docs/contract.md#ec-and-core, step 3).
  core: { params: ['kappa', 'tau', 'alpha', 'shift', 'eps', 'tmax'], needs: ['text', 'confidence'], unavailable: () => null, run: (g, p) => equilibrium('core', g, p) },
  t3rl: { params: ['omega'], needs: ['verification'], unavailable: (g) => t3rlUnavailable(g), run: (g, p) => t3rl(g, p) },
  msttrl: {
    params: ['lambda', 'tauLow', 'tauHigh', 'uncheckedPassRate'],
    needs: ['outcome checks'],
    unavailable: (g, ctx, p) => msttrlUnavailable(g, p ? ctx?.peekOutcomeCache(p) : undefined),
    run: (g, p, ctx) => msttrl(g, p, ctx?.outcomeCache(p)),
  },
  empo: { params: [], needs: [], unavailable: () => null, run: (g, p) => empo(g, p) },
  selfcertainty: { params: [], needs: ['self-certainty'], unavailable: (g) => selfCertaintyUnavailable(g), run: (g, p) => selfCertainty(g, p) },
  entropy: { params: ['entropyWindow'], needs: ['entropy'], unavailable: (g, _ctx, p) => entropyUnavailable(g, p), run: (g, p) => tokenEntropy(g, p) },
  likelihood: { params: [], needs: ['confidence'], unavailable: (g) => likelihoodUnavailable(g), run: (g, p) => likelihood(g, p) },
  // TF-IDF of the texts in place of EVOL-RL's embeddings (docs/contract.md#novelty).
  novelty: { params: [], needs: ['text'], unavailable: (g) => noveltyUnavailable(g), run: (g, p) => novelty(g, p) },
};

export const OPERATORS: readonly OperatorSpec[] = OPERATOR_IDS.map((id) => ({ id, label: OPERATOR_LABELS[id], family: OPERATOR_FAMILIES[id], ...CODE[id] }));

export { OPERATOR_IDS };

export function operatorSpec(id: string): OperatorSpec | undefined {
  return OPERATORS.find((o) => o.id === id);
}

/** Parses a comma-separated operator list, naming the unknown ones. */
export function parseOperatorList(list: string): OperatorId[] {
  const ids = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = ids.filter((id) => !operatorSpec(id));
  if (unknown.length) throw new RangeError(`unknown operator${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${OPERATOR_IDS.join(', ')})`);
  return ids as OperatorId[];
}

/** The operators whose result a parameter changes (the panel shows a slider for these). */
export function operatorsUsing(param: NumericParam): OperatorId[] {
  return OPERATORS.filter((o) => o.params.includes(param)).map((o) => o.id);
}

/** Whether scoring with these operators (all when undefined) needs the reasoning vectors. */
export function needsReasoning(operators?: readonly OperatorId[]): boolean {
  return (operators ?? OPERATOR_IDS).some((id) => operatorSpec(id)?.needs.includes('text'));
}

/**
 * The operator a group's logged rewards are checked against (docs/contract.md#grpo-view): the one the user names,
 * else the one the group's log records (the reward helpers write it), else majority (TTRL).
 */
export function configuredOperatorOf(g: { loggedOperator?: string }, explicit?: OperatorId): OperatorId {
  return statedOperatorOf(g, explicit) ?? 'majority';
}

/**
 * The operator the user names, else the one the group's log records; undefined when neither says
 * (docs/contract.md#grpo-view): then no reward is checked against an assumed operator.
 */
export function statedOperatorOf(g: { loggedOperator?: string }, explicit?: OperatorId): OperatorId | undefined {
  if (explicit) return explicit;
  const logged = g.loggedOperator;
  return logged && operatorSpec(logged) ? (logged as OperatorId) : undefined;
}
