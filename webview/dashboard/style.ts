// How each operator is drawn in the dashboard's charts, from the operator list (`chart` in
// src/engine/operators/ids.ts: colour, dash, point style). Pure: no DOM, so the tests import it.
import { OPERATOR_INFO, type OperatorId } from '../../src/protocol/messages';

export interface OperatorStyle {
  label: string;
  /** A VS Code theme colour name, without the `--vscode-` prefix. */
  color: string;
  /** Chart.js borderDash ([] = solid). */
  dash: number[];
  pointStyle: 'circle' | 'rect' | 'triangle' | 'rectRot' | 'crossRot' | 'star';
}

export const OPERATOR_STYLES = Object.fromEntries(OPERATOR_INFO.map((o) => [o.id, { label: o.label, color: o.chart.color, dash: [...o.chart.dash], pointStyle: o.chart.pointStyle }])) as Record<OperatorId, OperatorStyle>;
