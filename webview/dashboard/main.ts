// The run dashboard (browser). Draws what the host computed (src/protocol/dashboard-messages.ts): the
// sections of sections.ts in page order (per-step charts, regimes, the recovery-region plot, the
// κ × τ sweep heatmap, the operator agreement matrix, the last re-score, run health), each chart a
// module of webview/dashboard/charts/ drawn with chart-kit.ts (Chart.js, colours from the --vscode-*
// theme variables, redrawn when the theme changes). This file holds the page's state, the header
// and summary, and routes the host's messages. Every string from the log goes into the DOM as
// text, never as HTML.
import './main.css';
import type { DashHostMessage, DashWebviewMessage } from '../../src/protocol/dashboard-messages';
import { h, clear, fmt } from '../dom';
import { applyTheme, charts, kit } from './chart-kit';
import { recoveryPoints } from './charts/recovery-plot';
import type { DashContext, DashSection } from './dash-context';
import { SECTIONS } from './sections';
import { stat } from './stat';

const vscode = acquireVsCodeApi<{ runId: string | null }>();
const post = (m: DashWebviewMessage): void => vscode.postMessage(m);
const ctx: DashContext = { model: null, sweep: null, whatif: null, operators: [], configured: 'majority', kit, post };

const app = document.getElementById('app')!;
clear(app);
const status = h('div', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' });
const header = h('header', { class: 'header' });
const runSelect = h('select', { id: 'run-select', 'aria-label': 'Run' });
runSelect.addEventListener('change', () => {
  post({ type: 'selectRun', runId: runSelect.value });
  fillCompare();
});
/** Compare with…: another open run, or this run under another operator (opens the runs side by side). */
const compareSelect = h('select', { id: 'compare-select', 'aria-label': 'Compare with another run' });
compareSelect.addEventListener('change', () => {
  const runId = compareSelect.value;
  compareSelect.selectedIndex = 0;
  if (runId) post({ type: 'compareWith', runId });
});
let runList: { id: string; label: string }[] = [];
function fillCompare(): void {
  clear(compareSelect);
  const current = runSelect.value;
  compareSelect.append(h('option', { value: '', selected: true }, 'Compare with…'));
  for (const r of runList) if (r.id !== current) compareSelect.append(h('option', { value: r.id }, r.label));
  if (current) compareSelect.append(h('option', { value: current }, 'this run under another operator…'));
}
const summary = h('div', { id: 'summary', class: 'summary' });
const bodies = new Map<string, HTMLElement>();
app.append(status, header, summary, ...SECTIONS.map(section));
app.dataset.state = 'waiting';

function section(s: DashSection): HTMLElement {
  const body = h('div', { class: 'body' });
  bodies.set(s.id, body);
  return h('section', { id: `section-${s.id}`, class: 'card', 'aria-labelledby': `title-${s.id}` }, h('h2', { id: `title-${s.id}` }, s.title), h('p', { class: 'muted small' }, s.note), body);
}

function renderSection(id: string): void {
  const s = SECTIONS.find((x) => x.id === id);
  const body = bodies.get(id);
  if (s && body) s.render(body, ctx);
}

// ---- messages -----------------------------------------------------------------------------------

window.addEventListener('message', (e: MessageEvent<DashHostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'init':
      ctx.operators = m.operators;
      ctx.configured = m.configured;
      clear(runSelect);
      for (const r of m.runs) runSelect.append(h('option', { value: r.id, selected: r.id === m.runId }, r.label));
      runList = m.runs.map((r) => ({ id: r.id, label: r.label }));
      fillCompare();
      renderHeader();
      vscode.setState({ runId: m.runId });
      return;
    case 'model':
      ctx.model = m.model;
      if (ctx.sweep && ctx.sweep.runId !== ctx.model.runId) ctx.sweep = null;
      app.dataset.state = 'ready';
      app.dataset.live = String(m.live);
      renderAll();
      return;
    case 'sweep':
      ctx.sweep = m.sweep;
      renderSection('sweep');
      return;
    case 'whatif':
      ctx.whatif = m.whatif;
      renderSection('whatif');
      return;
    case 'busy':
      status.textContent = m.what ? `${m.what}…` : '';
      document.body.dataset.busy = m.what ? 'true' : 'false';
      return;
    case 'error':
      status.textContent = m.message;
      return;
  }
});

function renderHeader(): void {
  clear(header);
  const rescore = h('button', { id: 'rescore', class: 'button' }, 'Re-score run…');
  rescore.addEventListener('click', () => post({ type: 'rescore' }));
  header.append(h('h1', {}, 'Run dashboard'), h('label', { class: 'inline' }, 'Run ', runSelect), compareSelect, rescore);
}

function renderAll(): void {
  const m = ctx.model;
  if (!m) return;
  applyTheme();
  clear(summary);
  const contested = m.regimes.contested ?? 0;
  summary.append(
    stat('groups', String(m.groups)),
    stat('steps', String(m.steps.length)),
    stat('contested', String(contested)),
    stat('recovery points', String(m.recovery.length)),
    stat('ground truth', m.hasTruth ? 'logged (diagnostic)' : 'not logged'),
    stat('computed in', `${fmt(m.ms, 0)} ms`),
  );
  document.body.dataset.groups = String(m.groups);
  for (const s of SECTIONS) renderSection(s.id);
}

// Follow the theme: VS Code swaps the body's class.
new MutationObserver(() => {
  if (ctx.model) renderAll();
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

// Tests: where a recovery point is on screen (page coordinates inside this frame).
(window as unknown as { consensusLensDashboard: unknown }).consensusLensDashboard = {
  recoveryPoint: (i: number) => {
    const c = charts.get('recovery');
    const el = c?.getDatasetMeta(0).data[i];
    if (!c || !el) return null;
    const r = c.canvas.getBoundingClientRect();
    return { x: r.left + el.x, y: r.top + el.y, questionId: recoveryPoints[i]?.questionId, step: recoveryPoints[i]?.step };
  },
  recoveryCount: () => recoveryPoints.length,
  /** Every bar of the recovery plot: its value and whether it is drawn inside the chart area. */
  recoveryBars: () => {
    const c = charts.get('recovery');
    if (!c) return null;
    const area = c.chartArea;
    return [1, 2].flatMap((ds) =>
      c.getDatasetMeta(ds).data.map((el, i) => ({
        kind: ds === 1 ? 'vote' : 'confidence',
        value: ds === 1 ? recoveryPoints[i].voteBar : recoveryPoints[i].confidenceBar,
        inside: el.y >= area.top - 0.5 && el.y <= area.bottom + 0.5,
        axisMin: c.scales.y.min,
      })),
    );
  },
  /** The title each chart displays (Chart.js draws titles only with its Title plugin registered). */
  chartTitles: () => Object.fromEntries([...charts.entries()].map(([id, c]) => [id, (c as unknown as { titleBlock?: { options?: { text?: string } } }).titleBlock?.options?.text ?? null])),
};

renderHeader();
post({ type: 'ready' });
