// How each operator is drawn in the dashboard's charts: a theme colour (a --vscode-charts-* variable)
// plus a line dash and a point style, so two operators never differ by colour alone. The colours
// are pairwise far apart in both default themes (the unit test measures the CIELAB distance), and
// EC, CoRE's confidence-free twin, is dashed. A new operator needs a row here (the compiler asks
// for it). Pure: no DOM, so the tests import it.
import { OPERATOR_LABELS, type OperatorId } from '../../src/protocol/messages';

export interface OperatorStyle {
  label: string;
  /** A VS Code theme colour name, without the `--vscode-` prefix. */
  color: string;
  /** Chart.js borderDash ([] = solid). */
  dash: number[];
  pointStyle: 'circle' | 'rect' | 'triangle' | 'rectRot' | 'crossRot' | 'star';
}

export const OPERATOR_STYLES: Record<OperatorId, OperatorStyle> = {
  majority: { label: OPERATOR_LABELS.majority, color: 'foreground', dash: [], pointStyle: 'circle' },
  cisc: { label: OPERATOR_LABELS.cisc, color: 'charts-orange', dash: [], pointStyle: 'rect' },
  ec: { label: OPERATOR_LABELS.ec, color: 'charts-red', dash: [6, 3], pointStyle: 'triangle' },
  core: { label: OPERATOR_LABELS.core, color: 'charts-green', dash: [], pointStyle: 'rectRot' },
  t3rl: { label: OPERATOR_LABELS.t3rl, color: 'charts-blue', dash: [2, 2], pointStyle: 'crossRot' },
  msttrl: { label: OPERATOR_LABELS.msttrl, color: 'charts-purple', dash: [8, 3, 2, 3], pointStyle: 'star' },
};
