// The run dashboard (browser). Draws what the host computed (src/protocol/dashboard.ts):
// per-step charts, regimes, the recovery-region plot (CoRE Fig. 4), the κ × τ sweep heatmap, the
// operator agreement matrix and the last re-score. Charts use Chart.js with colours from the
// --vscode-* theme variables (redrawn when the theme changes). Every string from the log goes into
// the DOM as text, never as HTML.
import './main.css';
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
  type ChartDataset,
} from 'chart.js';
import type { DashHistogram, DashHostMessage, DashModel, DashRecoveryPoint, DashSweep, DashWebviewMessage, DashWhatIf } from '../../src/protocol/dashboard-messages';
import { renderAgreement as renderAgreementTable, renderSweep as renderSweepTable } from './tables';
import { OPERATOR_LABELS, type OperatorId } from '../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../dom';
import { renderHealth } from './health-section';
import { formatAccuracy } from '../../src/engine/browser';
import { OPERATOR_STYLES } from './style';
import { placeBar, recoveryAxis } from './recovery';

// Title is a plugin: without it `plugins.title` options are silently ignored.
Chart.register(BarController, BarElement, CategoryScale, Filler, Legend, LineController, LineElement, LinearScale, LogarithmicScale, PointElement, ScatterController, Title, Tooltip);

const vscode = acquireVsCodeApi<{ runId: string | null }>();
const post = (m: DashWebviewMessage): void => vscode.postMessage(m);
const OP_LABELS: Record<OperatorId, string> = OPERATOR_LABELS;
/** An operator's line: its colour, dash and point style (never colour alone). */
function opLine(o: OperatorId) {
  const st = OPERATOR_STYLES[o];
  const c = cssVar(st.color);
  return { borderColor: c, backgroundColor: c, borderDash: st.dash, pointStyle: st.pointStyle, pointRadius: 4 };
}
const REGIMES = ['saturated', 'contested', 'competence-floor', 'empty'];
const REGIME_COLORS: Record<string, string> = { saturated: 'charts-blue', contested: 'charts-purple', 'competence-floor': 'charts-red', empty: 'descriptionForeground' };

let model: DashModel | null = null;
let sweep: DashSweep | null = null;
let whatif: DashWhatIf | null = null;
let operators: OperatorId[] = [];
const charts = new Map<string, Chart>();

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
const sections = {
  steps: section(
    'steps',
    'Per step',
    'Mean CoRE gate and majority ratio; pseudo-labels that differ from the vote per operator; reward mismatches; accuracy against logged ground truth (a diagnostic).',
  ),
  regimes: section('regimes', 'Regimes', 'Saturated: the top class holds ≥ 90% of N; competence floor: < 25%; contested otherwise.'),
  recovery: section(
    'recovery',
    'Recovery region (CoRE Fig. 4)',
    'One point per contested question: outnumbering ratio r = m/n* against the coherence advantage c*/c_w the runner-up has. The vote’s bar (m−1)/(n*−1) and the confidence-lowered bar (w̄_w/w̄_*)·(m−1)/(n*−1) are drawn per question; a point above its confidence bar can be recovered (the axis holds every bar; one beyond 10⁻³ or 10⁴ is an arrow at the edge). Click a point to open its question.',
  ),
  sweep: section('sweep', 'κ × τ sweep', 'CoRE (or another operator) over a 6 × 6 grid: pseudo-labels that differ from the vote, or accuracy where ground truth is logged.'),
  agreement: section('agreement', 'Operator agreement', 'Share of questions where two operators choose the same answer class (both ran); the last column is accuracy against logged ground truth.'),
  whatif: section('whatif', 'Last re-score', 'Consensus Lens: Re-score Run… compares a setting with the configured baseline. A cancelled re-score never replaces this.'),
  health: section(
    'health',
    'Run health',
    'Per-step series from the logs with change-point alarms (a permutation-calibrated CUSUM test, ≤ 5% false alarms on a stationary run), the confidence premise (within-question AUROC), reward bugs by class and degenerate pluralities — the same analysis as consensus-lens health (docs/health.md).',
  ),
};
app.append(status, header, summary, ...Object.values(sections).map((s) => s.root));
app.dataset.state = 'waiting';

function section(id: string, title: string, note: string) {
  const body = h('div', { class: 'body' });
  const root = h('section', { id: `section-${id}`, class: 'card', 'aria-labelledby': `title-${id}` }, h('h2', { id: `title-${id}` }, title), h('p', { class: 'muted small' }, note), body);
  return { root, body };
}

// ---- theme --------------------------------------------------------------------------------------

function cssVar(name: string, fallback = '#888'): string {
  const v = getComputedStyle(document.body).getPropertyValue(`--vscode-${name}`).trim();
  return v || fallback;
}
function alpha(color: string, a: number): string {
  return `color-mix(in srgb, ${color} ${Math.round(a * 100)}%, transparent)`;
}
function applyTheme(): void {
  Chart.defaults.color = cssVar('foreground');
  Chart.defaults.borderColor = cssVar('widget-border', cssVar('panel-border', '#8884'));
  Chart.defaults.font.family = getComputedStyle(document.body).getPropertyValue('--vscode-font-family') || 'sans-serif';
  Chart.defaults.animation = false;
}

function chart(id: string, parent: HTMLElement, config: ChartConfiguration): Chart {
  charts.get(id)?.destroy();
  const canvas = h('canvas', { id: `chart-${id}`, role: 'img', 'aria-label': id });
  const box = h('div', { class: 'chart' }, canvas);
  parent.append(box);
  const c = new Chart(canvas, config);
  charts.set(id, c);
  return c;
}

// ---- messages -----------------------------------------------------------------------------------

window.addEventListener('message', (e: MessageEvent<DashHostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'init':
      operators = m.operators;
      clear(runSelect);
      for (const r of m.runs) runSelect.append(h('option', { value: r.id, selected: r.id === m.runId }, r.label));
      runList = m.runs.map((r) => ({ id: r.id, label: r.label }));
      fillCompare();
      renderHeader();
      vscode.setState({ runId: m.runId });
      return;
    case 'model':
      model = m.model;
      if (sweep && sweep.runId !== model.runId) sweep = null;
      app.dataset.state = 'ready';
      app.dataset.live = String(m.live);
      renderAll();
      return;
    case 'sweep':
      sweep = m.sweep;
      renderSweep();
      return;
    case 'whatif':
      whatif = m.whatif;
      renderWhatIf();
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
  if (!model) return;
  applyTheme();
  const m = model;
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
  renderHealth(sections.health.body, m.health, { chart, cssVar, openQuestion: (step, questionId) => post({ type: 'openQuestion', step, questionId }) });
  renderSteps();
  renderRegimes();
  renderRecovery();
  renderSweep();
  renderAgreement();
  renderWhatIf();
}

function stat(label: string, value: string): HTMLElement {
  return h('div', { class: 'stat', 'data-stat': label }, h('div', { class: 'muted small' }, label), h('div', { class: 'value' }, value));
}

// ---- per-step charts ------------------------------------------------------------------------------

function renderSteps(): void {
  const m = model!;
  const body = sections.steps.body;
  clear(body);
  const labels = m.steps.map((s) => String(s.step));
  const grid = h('div', { class: 'grid2' });
  body.append(grid);
  chart('gate', grid, {
    type: 'line',
    data: {
      labels,
      datasets: [
        { label: 'mean CoRE gate', data: m.steps.map((s) => s.meanGate), borderColor: cssVar('charts-green'), backgroundColor: cssVar('charts-green') },
        { label: 'majority ratio', data: m.steps.map((s) => s.meanMajorityRatio), borderColor: cssVar('charts-blue'), backgroundColor: cssVar('charts-blue') },
      ],
    },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'mean CoRE gate and majority ratio' } },
      scales: { y: { min: 0, max: 1, title: { display: true, text: 'mean' } }, x: { title: { display: true, text: 'step' } } },
    },
  });
  const ops = operators.filter((o) => o !== 'majority' && m.steps.some((s) => s.overturns[o] !== undefined));
  chart('overturns', grid, {
    type: 'line',
    data: { labels, datasets: ops.map((o) => ({ label: `${OP_LABELS[o]} ≠ vote`, data: m.steps.map((s) => s.overturns[o] ?? null), ...opLine(o) })) },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'pseudo-labels that differ from the vote' } },
      scales: { y: { beginAtZero: true, title: { display: true, text: 'questions' } }, x: { title: { display: true, text: 'step' } } },
    },
  });
  chart('mismatches', grid, {
    type: 'bar',
    data: { labels, datasets: [{ label: 'reward mismatches (roll-outs)', data: m.steps.map((s) => s.mismatches), backgroundColor: cssVar('charts-red') }] },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'roll-outs whose logged reward differs from the configured operator' } },
      scales: { y: { beginAtZero: true }, x: { title: { display: true, text: 'step' } } },
    },
  });
  if (m.hasTruth) {
    const accOps = operators.filter((o) => m.steps.some((s) => s.accuracy[o] !== undefined));
    chart('accuracy', grid, {
      type: 'line',
      data: { labels, datasets: accOps.map((o) => ({ label: OP_LABELS[o], data: m.steps.map((s) => s.accuracy[o] ?? null), ...opLine(o) })) },
      options: {
        maintainAspectRatio: false,
        plugins: {
          title: { display: true, text: 'pseudo-label accuracy (logged ground truth; diagnostic)' },
          // "x% (n)": over the n questions with ground truth the operator could run on, when fewer
          // than the step's questions with ground truth (T3RL, MS-TTRL).
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const s = m.steps[ctx.dataIndex];
                const o = accOps[ctx.datasetIndex];
                return `${OP_LABELS[o]}: ${formatAccuracy(s.accuracy[o], s.accuracyGroups[o], s.withTruth)} of ${s.withTruth} with ground truth`;
              },
            },
          },
        },
        scales: { y: { min: 0, max: 1 }, x: { title: { display: true, text: 'step' } } },
      },
    });
    // The same figures as text (screen readers, tests): one row per step.
    const t = h(
      'table',
      { class: 'grid', id: 'accuracy-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'step'), h('th', {}, 'with ground truth'), ...accOps.map((o) => h('th', { scope: 'col' }, OP_LABELS[o])))),
    );
    const tb = h('tbody');
    for (const s of m.steps)
      tb.append(
        h(
          'tr',
          { 'data-step': s.step },
          h('td', { class: 'num' }, String(s.step)),
          h('td', { class: 'num' }, String(s.withTruth)),
          ...accOps.map((o) =>
            h('td', { class: 'num', 'data-op': o, 'data-value': s.accuracy[o] ?? '', 'data-groups': s.accuracyGroups[o] ?? '' }, formatAccuracy(s.accuracy[o], s.accuracyGroups[o], s.withTruth, '—')),
          ),
        ),
      );
    t.append(tb);
    body.append(h('details', { id: 'accuracy-details' }, h('summary', {}, 'Accuracy per step as a table ((n): over the n questions the operator could run on)'), t));
  } else grid.append(h('p', { class: 'muted', id: 'no-truth' }, 'No ground truth is logged: no accuracy is shown (it is never inferred).'));
}

function renderRegimes(): void {
  const m = model!;
  const body = sections.regimes.body;
  clear(body);
  const present = REGIMES.filter((r) => m.regimes[r]);
  const table = h('table', { class: 'grid', id: 'regime-table' }, h('thead', {}, h('tr', {}, h('th', {}, 'regime'), h('th', {}, 'questions'), h('th', {}, 'share'))));
  const tb = h('tbody');
  for (const r of present)
    tb.append(
      h(
        'tr',
        { 'data-regime': r },
        h('td', {}, r.replace('-', ' ')),
        h('td', { class: 'num' }, String(m.regimes[r])),
        h('td', { class: 'num' }, `${fmt((100 * m.regimes[r]) / Math.max(1, m.groups), 1)}%`),
      ),
    );
  table.append(tb);
  const wrap = h('div', { class: 'grid2' }, h('div', {}, table));
  body.append(wrap);
  chart('regimes', wrap, {
    type: 'bar',
    data: {
      labels: m.steps.map((s) => String(s.step)),
      datasets: present.map((r) => ({ label: r.replace('-', ' '), data: m.steps.map((s) => s.regimes[r] ?? 0), backgroundColor: cssVar(REGIME_COLORS[r]) })),
    },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'questions per regime' } },
      scales: { x: { stacked: true, title: { display: true, text: 'step' } }, y: { stacked: true, beginAtZero: true } },
    },
  });
}

// ---- recovery region ------------------------------------------------------------------------------

let recoveryPoints: DashRecoveryPoint[] = [];

function renderRecovery(): void {
  const m = model!;
  const body = sections.recovery.body;
  clear(body);
  recoveryPoints = m.recovery;
  if (!m.recovery.length) {
    body.append(h('p', { class: 'muted', id: 'no-recovery' }, 'No contested question with a runner-up of two or more roll-outs.'));
    return;
  }
  const pts = m.recovery;
  // The axis fits the points and both bars; a bar outside [FLOOR, CEILING] is an arrow at the edge.
  const axis = recoveryAxis(pts.flatMap((p) => [p.y, p.voteBar, p.confidenceBar]));
  const vote = pts.map((p) => placeBar(p.voteBar, axis));
  const conf = pts.map((p) => placeBar(p.confidenceBar, axis));
  const barStyle = (b: { clipped: 'below' | 'above' | null }) => (b.clipped ? 'triangle' : 'line');
  const barRotation = (b: { clipped: 'below' | 'above' | null }) => (b.clipped === 'below' ? 180 : 0);
  const green = cssVar('charts-green');
  const red = cssVar('charts-red');
  const fg = cssVar('foreground');
  const datasets: ChartDataset<'scatter'>[] = [
    {
      label: 'questions (filled: CoRE overturns the vote)',
      data: pts.map((p) => ({ x: p.x, y: p.y })),
      pointRadius: 5,
      pointHoverRadius: 7,
      pointBackgroundColor: pts.map((p) => (p.overturn ? fg : 'transparent')),
      pointBorderColor: fg,
      borderColor: fg,
      backgroundColor: fg,
    },
    {
      label: 'vote’s bar (m−1)/(n*−1)',
      data: pts.map((p, i) => ({ x: p.x, y: vote[i].y })),
      pointStyle: vote.map(barStyle),
      pointRotation: vote.map(barRotation),
      pointRadius: 8,
      borderColor: red,
      backgroundColor: red,
      pointBorderWidth: 2,
    },
    {
      label: 'confidence-lowered bar',
      data: pts.map((p, i) => ({ x: p.x, y: conf[i].y })),
      pointStyle: conf.map(barStyle),
      pointRotation: conf.map(barRotation),
      pointRadius: 8,
      borderColor: green,
      backgroundColor: green,
      pointBorderWidth: 2,
    },
  ];
  const maxX = Math.max(...pts.map((p) => p.x), 1) * 1.1;
  datasets.push({
    label: 'c*/c_w = r',
    data: [
      { x: 1, y: 1 },
      { x: maxX, y: maxX },
    ],
    showLine: true,
    pointRadius: 0,
    borderDash: [4, 4],
    borderColor: alpha(red, 0.6),
    backgroundColor: 'transparent',
  });
  const c = chart('recovery', body, {
    type: 'scatter',
    data: { datasets },
    options: {
      maintainAspectRatio: false,
      onClick: (_e, elements) => {
        const el = elements.find((x) => x.datasetIndex === 0);
        if (el) openPoint(el.index);
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const p = pts[ctx.dataIndex];
              if (!p) return '';
              if (ctx.datasetIndex === 0)
                return `${p.questionId} (step ${p.step}): r = ${fmt(p.x, 2)}, c*/c_w = ${fmt(p.y, 3)}, bars ${fmt(p.voteBar, 2)} / ${fmt(p.confidenceBar, 2)}${p.overturn ? ' · overturned' : ''}`;
              const bar = ctx.datasetIndex === 1 ? p.voteBar : ctx.datasetIndex === 2 ? p.confidenceBar : ctx.parsed.y;
              const clipped = (ctx.datasetIndex === 1 ? vote : ctx.datasetIndex === 2 ? conf : [])[ctx.dataIndex]?.clipped;
              return `${ctx.dataset.label}: ${fmt(bar, 3)}${clipped ? ` (off the plot, ${clipped})` : ''}`;
            },
          },
        },
      },
      scales: {
        x: { type: 'linear', min: 1, title: { display: true, text: 'outnumbering ratio r = m/n*' } },
        y: { type: 'logarithmic', min: axis.min, max: axis.max, title: { display: true, text: 'c*/c_w (log)' }, ticks: { callback: (v) => fmt(Number(v), 2) } },
      },
    },
  });
  (c.canvas.parentElement as HTMLElement).classList.add('tall');
  // Keyboard and screen readers: the same points as a list of buttons.
  const list = h('details', { id: 'recovery-list' }, h('summary', {}, `The ${pts.length} points as a list`));
  const ul = h('ul', { class: 'points' });
  pts.slice(0, 500).forEach((p, i) => {
    const b = h(
      'button',
      { class: 'link', 'data-index': i, 'data-question': p.questionId, 'data-step': p.step },
      `${p.questionId} · step ${p.step} · r ${fmt(p.x, 2)} · c*/c_w ${fmt(p.y, 3)}${p.recoverable ? ' · above its bar' : ''}${p.overturn ? ' · overturned' : ''}`,
    );
    b.addEventListener('click', () => openPoint(i));
    ul.append(h('li', {}, b));
  });
  list.append(ul);
  body.append(list);
}

function openPoint(i: number): void {
  const p = recoveryPoints[i];
  if (p) post({ type: 'openQuestion', step: p.step, questionId: p.questionId });
}

// ---- sweep heatmap and agreement (tables.ts) ------------------------------------------------------

function renderSweep(): void {
  renderSweepTable(sections.sweep.body, sweep, model, post);
}

function renderAgreement(): void {
  renderAgreementTable(sections.agreement.body, model!);
}

// ---- last re-score --------------------------------------------------------------------------------------

function histogramChart(id: string, parent: HTMLElement, title: string, hs: { label: string; h: DashHistogram; color: string }[]): void {
  const first = hs[0].h;
  const bins = first.counts.length;
  const width = (first.hi - first.lo) / bins;
  const labels = Array.from({ length: bins }, (_, b) => fmt(first.lo + (b + 0.5) * width, 2));
  chart(id, parent, {
    type: 'bar',
    data: {
      labels,
      datasets: hs.map((x) => ({ label: x.label, data: x.h.counts, backgroundColor: alpha(x.color, 0.7), borderColor: x.color, borderWidth: 1, barPercentage: 1, categoryPercentage: 1 })),
    },
    options: { maintainAspectRatio: false, plugins: { title: { display: true, text: title } }, scales: { y: { type: 'logarithmic', title: { display: true, text: 'count (log)' } } } },
  });
}

function renderWhatIf(): void {
  const body = sections.whatif.body;
  clear(body);
  const w = whatif;
  if (!w || (model && w.runId !== model.runId)) {
    body.append(h('p', { class: 'muted', id: 'no-whatif' }, 'No re-score of this run yet.'));
    return;
  }
  const changed =
    Object.entries(w.changed)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'configured values';
  const exportJsonl = h('button', { class: 'button', id: 'export-jsonl' }, 'Export JSONL…');
  const exportCsv = h('button', { class: 'button', id: 'export-csv' }, 'Export CSV…');
  exportJsonl.addEventListener('click', () => post({ type: 'export', format: 'jsonl' }));
  exportCsv.addEventListener('click', () => post({ type: 'export', format: 'csv' }));
  body.append(
    h(
      'div',
      { class: 'summary', id: 'whatif-summary', 'data-flips': w.flipsCount, 'data-groups': w.groups },
      stat('setting', `${OP_LABELS[w.operator]} ${changed}`),
      stat('pseudo-label flips', `${w.flipsCount} of ${w.groups}`),
      stat('advantage sign changes', `${w.signChanges} of ${w.rollouts} roll-outs`),
      stat('mean gate', `${fmt(w.meanGateBefore, 3)} → ${fmt(w.meanGateAfter, 3)}`),
      stat('accuracy (diagnostic)', w.accuracyBefore === null ? 'no ground truth logged' : `${fmt(100 * w.accuracyBefore, 1)}% → ${fmt(100 * (w.accuracyAfter ?? 0), 1)}%`),
      stat('took', `${fmt(w.ms / 1000, 2)} s`),
    ),
    h('div', { class: 'row' }, exportJsonl, exportCsv),
  );
  const grid = h('div', { class: 'grid2' });
  body.append(grid);
  const labels = w.steps.map((s) => String(s.step));
  chart('whatif-steps', grid, {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { type: 'bar', label: 'flips', data: w.steps.map((s) => s.flips), backgroundColor: cssVar('charts-purple'), yAxisID: 'y' },
        ...(w.accuracyBefore !== null
          ? ([
              { type: 'line', label: 'accuracy before', data: w.steps.map((s) => s.accuracyBefore), borderColor: cssVar('charts-blue'), backgroundColor: cssVar('charts-blue'), yAxisID: 'acc' },
              { type: 'line', label: 'accuracy after', data: w.steps.map((s) => s.accuracyAfter), borderColor: cssVar('charts-green'), backgroundColor: cssVar('charts-green'), yAxisID: 'acc' },
            ] as ChartDataset<'line'>[])
          : []),
      ] as ChartDataset<'bar'>[],
    },
    options: {
      maintainAspectRatio: false,
      scales: {
        y: { beginAtZero: true, title: { display: true, text: 'flips' } },
        acc: { display: w.accuracyBefore !== null, position: 'right', min: 0, max: 1, title: { display: true, text: 'accuracy' } },
        x: { title: { display: true, text: 'step' } },
      },
    },
  });
  histogramChart('reward-shift', grid, 'reward shift ΔR per roll-out', [{ label: 'ΔR', h: w.histograms.rewardShift, color: cssVar('charts-orange') }]);
  histogramChart('advantage-shift', grid, 'advantage shift ΔA per roll-out', [{ label: 'ΔA', h: w.histograms.advantageShift, color: cssVar('charts-blue') }]);
  histogramChart('gates', grid, 'gate per question', [
    { label: 'before', h: w.histograms.gateBefore, color: cssVar('charts-blue') },
    { label: 'after', h: w.histograms.gateAfter, color: cssVar('charts-green') },
  ]);
  const table = h('table', { class: 'grid', id: 'flip-table' }, h('thead', {}, h('tr', {}, ...['step', 'question', 'before', 'after'].map((t) => h('th', { scope: 'col' }, t)))));
  const tb = h('tbody');
  for (const f of w.flips) {
    const open = h('button', { class: 'link', 'data-question': f.questionId, 'data-step': f.step, title: 'Open this question in the consensus panel' }, f.questionId);
    open.addEventListener('click', () => post({ type: 'openQuestion', step: f.step, questionId: f.questionId }));
    tb.append(h('tr', {}, h('td', { class: 'num' }, String(f.step)), h('td', {}, open), h('td', { class: 'answer' }, showLabel(f.before)), h('td', { class: 'answer' }, showLabel(f.after))));
  }
  table.append(tb);
  body.append(h('h3', {}, `Questions whose pseudo-label flips (${w.flipsCount}${w.flips.length < w.flipsCount ? `, first ${w.flips.length}` : ''})`), h('div', { class: 'scroll' }, table));
}

// Follow the theme: VS Code swaps the body's class.
new MutationObserver(() => {
  if (model) renderAll();
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
