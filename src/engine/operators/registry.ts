// The one registry of consensus operators: id, name, paper, parameters, the data each needs, and
// whether it can run on a given group (and why not).

import type { PreparedGroup } from '../prepare';
import type { NumericParam, Params } from '../params';
import type { OperatorId, OperatorResult } from './result';
import { cisc, ciscUnavailable, majority, t3rl, t3rlUnavailable } from './vote';
import { equilibrium } from './equilibrium';
import { msttrl, msttrlUnavailable, OutcomeCache } from './msttrl';

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
}

export function createRunContext(): RunContext {
  return new RunContext();
}

export interface OperatorSpec {
  id: OperatorId;
  name: string;
  paper: string;
  /** Parameters that change this operator's result (beyond advEps/advScale). */
  params: readonly NumericParam[];
  /** What the log must hold for it, beyond answers. */
  needs: readonly ('text' | 'confidence' | 'verification' | 'outcome checks')[];
  /** Why it cannot run on this group, or null. */
  unavailable(g: PreparedGroup, ctx?: RunContext, p?: Params): string | null;
  run(g: PreparedGroup, p: Params, ctx?: RunContext): OperatorResult;
}

export const OPERATORS: readonly OperatorSpec[] = [
  {
    id: 'majority',
    name: 'Majority vote',
    paper: 'TTRL (Zuo et al.)',
    params: [],
    needs: [],
    unavailable: () => null,
    run: (g, p) => majority(g, p),
  },
  {
    id: 'cisc',
    name: 'Confidence-weighted vote',
    paper: 'CISC (Taubenfeld et al., 2025)',
    params: ['ciscTemp', 'tau'],
    needs: ['confidence'],
    unavailable: (g) => ciscUnavailable(g),
    run: (g, p) => cisc(g, p),
  },
  {
    id: 'ec',
    name: 'Equilibrium consensus',
    paper: 'CoRE without confidence',
    params: ['kappa', 'alpha', 'shift', 'eps', 'tmax'],
    needs: ['text'],
    unavailable: () => null,
    run: (g, p) => equilibrium('ec', g, p),
  },
  {
    id: 'core',
    name: 'CoRE',
    paper: 'CoRE: Consensus Rewards via Equilibrium',
    params: ['kappa', 'tau', 'alpha', 'shift', 'eps', 'tmax'],
    needs: ['text', 'confidence'],
    // Without confidence CoRE runs as EC and reports confidence: "missing" (SPEC §4.3 step 3).
    unavailable: () => null,
    run: (g, p) => equilibrium('core', g, p),
  },
  {
    id: 't3rl',
    name: 'Verification-weighted vote',
    paper: 'T3RL (Tool Verification for TTRL)',
    params: ['omega'],
    needs: ['verification'],
    unavailable: (g) => t3rlUnavailable(g),
    run: (g, p) => t3rl(g, p),
  },
  {
    id: 'msttrl',
    name: 'Outcome self-verification',
    paper: 'MS-TTRL',
    params: ['lambda', 'tauLow', 'tauHigh', 'uncheckedPassRate'],
    needs: ['outcome checks'],
    unavailable: (g, ctx, p) => msttrlUnavailable(g, p ? ctx?.peekOutcomeCache(p) : undefined),
    run: (g, p, ctx) => msttrl(g, p, ctx?.outcomeCache(p)),
  },
];

export const OPERATOR_IDS: readonly OperatorId[] = OPERATORS.map((o) => o.id);

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

/** Whether scoring with these operators (all when undefined) needs the reasoning vectors. */
export function needsReasoning(operators?: readonly OperatorId[]): boolean {
  return (operators ?? OPERATOR_IDS).some((id) => operatorSpec(id)?.needs.includes('text'));
}

/**
 * The operator a group's logged rewards are checked against (SPEC §5): the one the user names,
 * else the one the group's log records (the reward helpers write it), else majority (TTRL).
 */
export function configuredOperatorOf(g: { loggedOperator?: string }, explicit?: OperatorId): OperatorId {
  if (explicit) return explicit;
  const logged = g.loggedOperator;
  return logged && operatorSpec(logged) ? (logged as OperatorId) : 'majority';
}
