// What every dashboard chart draws with: Chart.js with the controllers the charts use, colours from
// the --vscode-* theme variables (redrawn when the theme changes), an operator's line style
// (style.ts: colour, dash and point style, never colour alone), and one canvas per chart id, the
// previous chart of that id destroyed first. Sections and charts import this; nothing here imports
// a section.
import {
  Chart,
  BarController,
  BarElement,
  CategoryScale,
  Filler,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Title,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import type { OperatorId } from '../../src/protocol/messages';
import { h } from '../dom';
import { OPERATOR_STYLES } from './style';

// Title is a plugin: without it `plugins.title` options are silently ignored.
Chart.register(BarController, BarElement, CategoryScale, Filler, Legend, LineController, LineElement, LinearScale, LogarithmicScale, PointElement, ScatterController, Title, Tooltip);

/** The charts on the page by id (the tests read them through the page's hooks). */
export const charts = new Map<string, Chart>();

/** What a section needs to draw charts (the run-health sections take it as their `deps`). */
export interface ChartKit {
  chart(id: string, parent: HTMLElement, config: ChartConfiguration): Chart;
  cssVar(name: string, fallback?: string): string;
}

export function cssVar(name: string, fallback = '#888'): string {
  const v = getComputedStyle(document.body).getPropertyValue(`--vscode-${name}`).trim();
  return v || fallback;
}

export function alpha(color: string, a: number): string {
  return `color-mix(in srgb, ${color} ${Math.round(a * 100)}%, transparent)`;
}

export function applyTheme(): void {
  Chart.defaults.color = cssVar('foreground');
  Chart.defaults.borderColor = cssVar('widget-border', cssVar('panel-border', '#8884'));
  Chart.defaults.font.family = getComputedStyle(document.body).getPropertyValue('--vscode-font-family') || 'sans-serif';
  Chart.defaults.animation = false;
}

export function chart(id: string, parent: HTMLElement, config: ChartConfiguration): Chart {
  charts.get(id)?.destroy();
  const canvas = h('canvas', { id: `chart-${id}`, role: 'img', 'aria-label': id });
  const box = h('div', { class: 'chart' }, canvas);
  parent.append(box);
  const c = new Chart(canvas, config);
  charts.set(id, c);
  return c;
}

/** An operator's line: its colour, dash and point style (never colour alone). */
export function opLine(o: OperatorId) {
  const st = OPERATOR_STYLES[o];
  const c = cssVar(st.color);
  return { borderColor: c, backgroundColor: c, borderDash: st.dash, pointStyle: st.pointStyle, pointRadius: 4 };
}

export const kit: ChartKit = { chart, cssVar };
