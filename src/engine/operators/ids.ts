// The operator list: the one place an operator's id and label are written. Everything else
// derives from it: the `OperatorId` type, `OPERATOR_IDS` (this order), the labels of the CLI, the
// panel and the dashboard, the settings enum (a test holds package.json to it), and `registry.ts`,
// which adds each operator's parameters, needs and code (and must cover this list: a type error
// otherwise). Pure data with no imports: the webviews bundle it, so it holds only what they show.

export const OPERATOR_LABELS = {
  /** TTRL (Zuo et al.): the majority vote. */
  majority: 'Majority',
  /** CISC (Taubenfeld et al., 2025): the confidence-weighted vote. */
  cisc: 'CISC',
  /** Equilibrium consensus: CoRE without confidence. */
  ec: 'EC',
  /** CoRE: Consensus Rewards via Equilibrium. */
  core: 'CoRE',
  /** T3RL (Tool Verification for TTRL): the verification-weighted vote. */
  t3rl: 'T3RL',
  /** MS-TTRL: outcome self-verification, three-state cache, gated IPS. */
  msttrl: 'MS-TTRL',
} as const satisfies Record<string, string>;

export type OperatorId = keyof typeof OPERATOR_LABELS;

export const OPERATOR_IDS = Object.keys(OPERATOR_LABELS) as readonly OperatorId[];

export function isOperatorId(x: unknown): x is OperatorId {
  return typeof x === 'string' && Object.hasOwn(OPERATOR_LABELS, x);
}
