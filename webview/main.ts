// The consensus panel (browser). Renders the QuestionView the host sends; never computes rewards.
// All data goes into the DOM as text (textContent / attributes), never as HTML. This file lays the
// page out and routes the host's messages; each part of the page is a module of webview/consensus/
// (header and label strip, sliders, sensitivity, class table, roll-out table) and the graph is
// webview/graph.ts.
import './main.css';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { HostMessage, QuestionView } from '../src/protocol/messages';
import { h, clear } from './dom';
import { RolloutGraph } from './graph';
import { renderClasses } from './consensus/class-table';
import { renderControls, syncSliders, visibleSpecs } from './consensus/controls';
import { renderFamilyCompare } from './consensus/family-compare';
import { renderHeader, renderStrip, renderTheory } from './consensus/header';
import { panel, post, requests, restoredState, sameKey, saveState, shown } from './consensus/panel-state';
import { renderRollouts, renderTokenNote, rolloutKeys, selectRow } from './consensus/rollout-table';
import { renderSensitivity } from './consensus/sensitivity';

const app = document.getElementById('app')!;
clear(app);
const header = h('header', { id: 'header', class: 'header' });
const strip = h('section', { id: 'label-strip', class: 'strip', 'aria-label': 'Pseudo-labels of all operators' });
const controls = h('section', { id: 'controls', class: 'controls', 'aria-label': 'Operator parameters' });
const theory = h('section', { id: 'theory', class: 'theory', 'aria-label': 'Gate, regime and recovery threshold' });
const sensitivityBox = h('section', { id: 'sensitivity', class: 'sensitivity', 'aria-label': 'How close the CoRE label is to flipping' });
const graphBox = h('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Roll-out graph' });
const graphLegend = h(
  'div',
  { class: 'legend muted' },
  'Node size: equilibrium mass x* · outlined: dominant set · green: CoRE label class · ▲ reward mismatch · ◆ no answer · red tag: degenerate (empty, truncated, repetition-collapsed). Click a node to open its text.',
);
const classTable = h('table', { id: 'class-table', class: 'grid' });
const rolloutTable = h('table', { id: 'rollout-table', class: 'grid', role: 'grid', 'aria-label': 'Roll-outs' });
const tokenNote = h('p', { id: 'token-note', class: 'muted small', hidden: true });
const familyBox = h('section', { id: 'family-compare', class: 'family-compare', 'aria-label': 'Consensus vs confidence' });
const message = h('div', { id: 'message', class: 'message', role: 'status' });
app.append(
  message,
  header,
  strip,
  h('div', { class: 'columns' }, h('div', { class: 'left' }, controls, theory, sensitivityBox), h('div', { class: 'right' }, graphBox, graphLegend)),
  h('h3', {}, 'Answer classes'),
  h('div', { class: 'scroll' }, classTable),
  h('h3', {}, 'Roll-outs'),
  tokenNote,
  h('div', { class: 'scroll rollouts' }, rolloutTable),
  familyBox,
);
app.dataset.state = 'waiting';

const graph = new RolloutGraph(graphBox, {
  onSelect: (i) => setSelected(i, false),
  onOpen: (i) => openRollout(i),
});
rolloutKeys(rolloutTable, setSelected);

// ---- messages ---------------------------------------------------------------------------------

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'init':
      panel.specs = m.params;
      renderControls(controls);
      return;
    case 'view': {
      // A re-score reply older than the last slider move is stale.
      if (m.reason === 'rescore' && !requests.current(m.request)) return;
      shown.see(m.seq);
      const t0 = performance.now();
      renderView(m.view);
      requestAnimationFrame(() => {
        const ms = performance.now() - t0;
        document.body.dataset.renderedSeq = String(m.seq);
        document.body.dataset.renderMs = ms.toFixed(1);
        post({ type: 'rendered', seq: m.seq, ms, at: Date.now() });
      });
      return;
    }
    case 'empty':
      app.dataset.state = 'empty';
      message.textContent = m.message;
      return;
    case 'error':
      message.textContent = m.message;
      app.dataset.state = panel.view ? 'ready' : 'error';
      return;
    case 'select':
      setSelected(m.index, true);
      return;
    case 'sensitivity':
      // The read-out of the view shown, else of one already replaced: dropped.
      if (shown.current(m.seq)) renderSensitivity(sensitivityBox, m.params, m.ranges);
      return;
    case 'tokenCurves':
      panel.curves = { key: m.key, rows: new Map(m.rows.map((r) => [r.index, r])), note: m.note };
      if (panel.view && sameKey(panel.view.key, m.key)) {
        renderTokenNote(tokenNote);
        renderRollouts(rolloutTable, panel.view, setSelected);
      }
      return;
  }
});

// ---- rendering --------------------------------------------------------------------------------

function renderView(v: QuestionView): void {
  const view = panel.view;
  const sameQuestion = view && view.key.runId === v.key.runId && view.key.step === v.key.step && view.key.questionId === v.key.questionId;
  const prevVisible = view
    ? visibleSpecs()
        .map((s) => s.key)
        .join()
    : '';
  panel.view = v;
  if (!sameQuestion) {
    panel.selected = -1;
    clear(sensitivityBox);
  }
  for (const k of Object.keys(panel.sliderValues)) if (v.params[k] !== undefined) panel.sliderValues[k] = v.params[k];
  message.textContent = '';
  renderTokenNote(tokenNote);
  app.dataset.state = 'ready';
  app.dataset.questionId = v.key.questionId;
  app.dataset.step = String(v.key.step);
  if (
    !sameQuestion ||
    visibleSpecs()
      .map((s) => s.key)
      .join() !== prevVisible
  )
    renderControls(controls);
  else syncSliders(v);
  const t0 = performance.now();
  renderHeader(header, v);
  renderStrip(strip, v);
  renderTheory(theory, v);
  renderClasses(classTable, v);
  renderRollouts(rolloutTable, v, setSelected);
  renderFamilyCompare(familyBox, v, openRollout);
  const t1 = performance.now();
  graph.render(v);
  document.body.dataset.renderParts = `tables ${(t1 - t0).toFixed(1)} graph ${(performance.now() - t1).toFixed(1)}`;
  if (panel.selected >= 0) graph.select(panel.selected);
  graphBox.dataset.nodes = String(graph.nodeCount());
  graphBox.dataset.classes = String(graph.classCount());
  saveState();
}

function openRollout(index: number): void {
  setSelected(index, true);
  post({ type: 'openRollout', index });
}

function setSelected(index: number, focus: boolean): void {
  panel.selected = index;
  selectRow(rolloutTable, index, focus);
  graph.select(index);
}

// Follow the theme: VS Code swaps the body's class (vscode-light / vscode-dark / vscode-high-contrast).
new MutationObserver(() => graph.restyle()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
window.addEventListener('resize', () => panel.view && graph.render(panel.view));

// Tests and power users: where a roll-out's node is on screen.
(window as unknown as { consensusLens: unknown }).consensusLens = {
  nodePosition: (i: number) => graph.nodePosition(i),
  graphInView: () => graph.inView(),
};

const restored = restoredState();
if (restored?.params) Object.assign(panel.sliderValues, restored.params);
post({ type: 'ready', state: restored ?? null });
