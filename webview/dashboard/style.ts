// How each operator is drawn in the dashboard's charts: a theme colour (a --vscode-charts-* variable)
// plus a line dash and a point style, so two operators never differ by colour alone. The colours
// are pairwise far apart in both default themes (the unit test measures the CIELAB distance), and
// EC, CoRE's confidence-free twin, is dashed. A new operator needs a row here (the compiler asks
// for it); its label is OPERATOR_LABELS'. Pure: no DOM, so the tests import it.
import type { OperatorId } from '../../src/protocol/messages';

export interface OperatorStyle {
  /** A VS Code theme colour name, without the `--vscode-` prefix. */
  color: string;
  /** Chart.js borderDash ([] = solid). */
  dash: number[];
  pointStyle: 'circle' | 'rect' | 'triangle' | 'rectRot' | 'crossRot' | 'star' | 'cross' | 'rectRounded' | 'dash' | 'line';
}

export const OPERATOR_STYLES: Record<OperatorId, OperatorStyle> = {
  majority: { color: 'foreground', dash: [], pointStyle: 'circle' },
  cisc: { color: 'charts-orange', dash: [], pointStyle: 'rect' },
  ec: { color: 'charts-red', dash: [6, 3], pointStyle: 'triangle' },
  core: { color: 'charts-green', dash: [], pointStyle: 'rectRot' },
  t3rl: { color: 'charts-blue', dash: [2, 2], pointStyle: 'crossRot' },
  msttrl: { color: 'charts-purple', dash: [8, 3, 2, 3], pointStyle: 'star' },
  // The label-free operators reuse the palette (it has seven colours for eleven operators): each
  // differs from the operator of its colour by line dash and point style. The confidence family
  // is dotted.
  empo: { color: 'charts-yellow', dash: [4, 2], pointStyle: 'cross' },
  selfcertainty: { color: 'charts-orange', dash: [1, 3], pointStyle: 'rectRounded' },
  entropy: { color: 'charts-blue', dash: [1, 3], pointStyle: 'dash' },
  likelihood: { color: 'charts-green', dash: [1, 3], pointStyle: 'line' },
  novelty: { color: 'charts-red', dash: [], pointStyle: 'circle' },
};
