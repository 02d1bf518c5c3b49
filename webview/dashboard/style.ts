// How each operator is drawn in the dashboard's charts: a theme colour (a --vscode-charts-* variable)
// plus a line dash and a point style, so two operators never differ by colour alone. CISC and EC
// used to be charts-orange and charts-yellow, which the default themes make nearly the same hue
// (#d18616 and #bf8803 in Light Modern: ΔE*ab 9.5); the colours below are pairwise far apart in both default
// themes (the unit test measures the CIELAB distance), and EC, CoRE's confidence-free twin, is
// dashed. Pure: no DOM, so the tests import it.
import type { OperatorId } from '../../src/protocol/messages';

export interface OperatorStyle {
  label: string;
  /** A VS Code theme colour name, without the `--vscode-` prefix. */
  color: string;
  /** Chart.js borderDash ([] = solid). */
  dash: number[];
  pointStyle: 'circle' | 'rect' | 'triangle' | 'rectRot' | 'crossRot' | 'star';
}

export const OPERATOR_STYLES: Record<OperatorId, OperatorStyle> = {
  majority: { label: 'Majority', color: 'foreground', dash: [], pointStyle: 'circle' },
  cisc: { label: 'CISC', color: 'charts-orange', dash: [], pointStyle: 'rect' },
  ec: { label: 'EC', color: 'charts-red', dash: [6, 3], pointStyle: 'triangle' },
  core: { label: 'CoRE', color: 'charts-green', dash: [], pointStyle: 'rectRot' },
  t3rl: { label: 'T3RL', color: 'charts-blue', dash: [2, 2], pointStyle: 'crossRot' },
  msttrl: { label: 'MS-TTRL', color: 'charts-purple', dash: [8, 3, 2, 3], pointStyle: 'star' },
};
