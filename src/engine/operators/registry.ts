// The consensus operators' code: each entry of the operator list (`ids.ts`: id, names, paper,
// parameters, needs) with whether it can run on a given group (and why not) and how to run it.

import type { PreparedGroup } from '../prepare';
import type { Params } from '../params';
import type { OperatorResult } from './result';
import { OPERATOR_IDS, OPERATOR_INFO, type OperatorId, type OperatorInfo } from './ids';
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

export interface OperatorSpec extends OperatorInfo {
  readonly id: OperatorId;
  /** Why it cannot run on this group, or null. */
  unavailable(g: PreparedGroup, ctx?: RunContext, p?: Params): string | null;
  run(g: PreparedGroup, p: Params, ctx?: RunContext): OperatorResult;
}

type OperatorCode = Pick<OperatorSpec, 'unavailable' | 'run'>;

const CODE: Record<OperatorId, OperatorCode> = {
  majority: { unavailable: () => null, run: (g, p) => majority(g, p) },
  cisc: { unavailable: (g) => ciscUnavailable(g), run: (g, p) => cisc(g, p) },
  ec: { unavailable: () => null, run: (g, p) => equilibrium('ec', g, p) },
  // Without confidence CoRE runs as EC and reports confidence: "missing" (SPEC §4.3 step 3).
  core: { unavailable: () => null, run: (g, p) => equilibrium('core', g, p) },
  t3rl: { unavailable: (g) => t3rlUnavailable(g), run: (g, p) => t3rl(g, p) },
  msttrl: {
    unavailable: (g, ctx, p) => msttrlUnavailable(g, p ? ctx?.peekOutcomeCache(p) : undefined),
    run: (g, p, ctx) => msttrl(g, p, ctx?.outcomeCache(p)),
  },
};

export const OPERATORS: readonly OperatorSpec[] = OPERATOR_INFO.map((o) => ({ ...o, ...CODE[o.id] }));

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

/** Whether scoring with these operators (all when undefined) needs the reasoning vectors. */
export function needsReasoning(operators?: readonly OperatorId[]): boolean {
  return (operators ?? OPERATOR_IDS).some((id) => operatorSpec(id)?.needs.includes('text'));
}
