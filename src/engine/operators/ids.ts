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
  /** EMPO (Zhang et al.): semantic-entropy reward, the log share of the roll-out's answer class, entropy-gated. */
  empo: 'EMPO',
  /** INTUITOR (Zhao et al.): self-certainty, mean over tokens of KL(uniform ‖ π). */
  selfcertainty: 'Self-certainty',
  /** RENT (Prabhudesai et al.): negative mean token entropy over the response's token window. */
  entropy: 'Token entropy',
  /** Sequence likelihood: the mean token log-prob (TTRL's `certainty` reward). */
  likelihood: 'Sequence likelihood',
  /** EVOL-RL (Zhou et al.): the majority vote with a semantic-novelty bonus. */
  novelty: 'Novelty vote',
} as const satisfies Record<string, string>;

export type OperatorId = keyof typeof OPERATOR_LABELS;

export const OPERATOR_IDS = Object.keys(OPERATOR_LABELS) as readonly OperatorId[];

/**
 * An operator's family: `consensus` rewards a roll-out for agreeing with the others (a vote over
 * answer classes, hard or soft); `confidence` rewards it for the model's own certainty, whatever
 * the others answer (docs/glossary.md, "operator family").
 */
export type OperatorFamily = 'consensus' | 'confidence';

export const OPERATOR_FAMILIES = {
  majority: 'consensus',
  cisc: 'consensus',
  ec: 'consensus',
  core: 'consensus',
  t3rl: 'consensus',
  msttrl: 'consensus',
  empo: 'consensus',
  selfcertainty: 'confidence',
  entropy: 'confidence',
  likelihood: 'confidence',
  novelty: 'consensus',
} as const satisfies Record<OperatorId, OperatorFamily>;

export const OPERATOR_FAMILY_IDS: readonly OperatorFamily[] = ['consensus', 'confidence'];

export function isOperatorId(x: unknown): x is OperatorId {
  return typeof x === 'string' && Object.hasOwn(OPERATOR_LABELS, x);
}
