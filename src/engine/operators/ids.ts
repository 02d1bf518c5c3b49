// The operator list: the one place an operator's id, names, paper, parameters and data needs are
// written. Everything else derives from it: the `OperatorId` type, `OPERATOR_IDS`, the labels of
// the CLI, the panel and the dashboard, the settings enum (a test holds package.json to it), and
// `registry.ts`, which adds each operator's code. Pure data, no imports at run time: the webviews
// bundle it.
import type { NumericParam } from '../params';

export interface OperatorInfo {
  readonly id: string;
  /** Short label (tables, legends, sliders). */
  readonly label: string;
  /** The label inside a sentence ("differs from the vote's label"). */
  readonly inSentence: string;
  readonly name: string;
  readonly paper: string;
  /** Parameters that change this operator's result (beyond the GRPO view's advEps/advScale). */
  readonly params: readonly NumericParam[];
  /** What the log must hold for it, beyond answers. */
  readonly needs: readonly ('text' | 'confidence' | 'verification' | 'outcome checks')[];
  /**
   * How the dashboard draws it: a theme colour (a --vscode-charts-* variable, without the
   * `--vscode-` prefix), a Chart.js line dash and a point style, so two operators never differ by
   * colour alone. The colours are pairwise far apart in both default themes (a test measures the
   * CIELAB distance); EC, CoRE's confidence-free twin, is dashed.
   */
  readonly chart: { readonly color: string; readonly dash: readonly number[]; readonly pointStyle: 'circle' | 'rect' | 'triangle' | 'rectRot' | 'crossRot' | 'star' };
}

export const OPERATOR_INFO = [
  { id: 'majority', label: 'Majority', inSentence: 'the vote', name: 'Majority vote', paper: 'TTRL (Zuo et al.)', params: [], needs: [], chart: { color: 'foreground', dash: [], pointStyle: 'circle' } },
  { id: 'cisc', label: 'CISC', inSentence: 'CISC', name: 'Confidence-weighted vote', paper: 'CISC (Taubenfeld et al., 2025)', params: ['ciscTemp', 'tau'], needs: ['confidence'], chart: { color: 'charts-orange', dash: [], pointStyle: 'rect' } },
  { id: 'ec', label: 'EC', inSentence: 'EC', name: 'Equilibrium consensus', paper: 'CoRE without confidence', params: ['kappa', 'alpha', 'shift', 'eps', 'tmax'], needs: ['text'], chart: { color: 'charts-red', dash: [6, 3], pointStyle: 'triangle' } },
  { id: 'core', label: 'CoRE', inSentence: 'CoRE', name: 'CoRE', paper: 'CoRE: Consensus Rewards via Equilibrium', params: ['kappa', 'tau', 'alpha', 'shift', 'eps', 'tmax'], needs: ['text', 'confidence'], chart: { color: 'charts-green', dash: [], pointStyle: 'rectRot' } },
  { id: 't3rl', label: 'T3RL', inSentence: 'T3RL', name: 'Verification-weighted vote', paper: 'T3RL (Tool Verification for TTRL)', params: ['omega'], needs: ['verification'], chart: { color: 'charts-blue', dash: [2, 2], pointStyle: 'crossRot' } },
  { id: 'msttrl', label: 'MS-TTRL', inSentence: 'MS-TTRL', name: 'Outcome self-verification', paper: 'MS-TTRL', params: ['lambda', 'tauLow', 'tauHigh', 'uncheckedPassRate'], needs: ['outcome checks'], chart: { color: 'charts-purple', dash: [8, 3, 2, 3], pointStyle: 'star' } },
] as const satisfies readonly OperatorInfo[];

export type OperatorId = (typeof OPERATOR_INFO)[number]['id'];

export const OPERATOR_IDS: readonly OperatorId[] = OPERATOR_INFO.map((o) => o.id);

export const OPERATOR_LABELS = Object.fromEntries(OPERATOR_INFO.map((o) => [o.id, o.label])) as Record<OperatorId, string>;

export function isOperatorId(x: unknown): x is OperatorId {
  return typeof x === 'string' && (OPERATOR_IDS as readonly string[]).includes(x);
}

/** The operators whose result a parameter changes (the sliders show a parameter for these). */
export function operatorsUsing(param: NumericParam): OperatorId[] {
  return OPERATOR_INFO.filter((o) => (o.params as readonly string[]).includes(param)).map((o) => o.id);
}
