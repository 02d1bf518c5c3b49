// The consensus panel (browser). Renders the QuestionView the host sends; never computes rewards.
// All data goes into the DOM as text (textContent / attributes), never as HTML.
import './main.css';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import { OPERATOR_LABELS } from '../src/protocol/messages';
import { Latest } from '../src/protocol/channel';
import type { HostMessage, OperatorId, PanelState, ParamSpec, QuestionKey, QuestionView, RolloutRow, SensitivityRange, TokenCurve, WebviewMessage } from '../src/protocol/messages';
import { h, clear, fmt, showLabel } from './dom';
import { lowestPoint, tokenSparkline } from './sparkline';
import { RolloutGraph } from './graph';

const vscode = acquireVsCodeApi<PanelState>();
const post = (m: WebviewMessage): void => vscode.postMessage(m);

const OP_LABELS: Record<OperatorId, string> = OPERATOR_LABELS;
const REGIME_LABELS: Record<string, string> = { saturated: 'saturated', contested: 'contested', 'competence-floor': 'competence floor', empty: 'empty' };

let specs: ParamSpec[] = [];
let view: QuestionView | null = null;
/** The ids of this panel's slider requests and of the view it shows (src/protocol/channel.ts). */
const requests = new Latest();
const shown = new Latest();
let selected = -1;
let sortCol: string = 'index';
let sortDir = 1;
const sliderValues: Record<string, number> = {};
/** The token curves of the question shown (they arrive after its view; a re-score keeps them). */
let curves: { key: QuestionKey; rows: Map<number, TokenCurve>; note: string | null } | null = null;
const sameKey = (a: QuestionKey, b: QuestionKey): boolean => a.runId === b.runId && a.step === b.step && a.questionId === b.questionId;

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
);
app.dataset.state = 'waiting';

const graph = new RolloutGraph(graphBox, {
  onSelect: (i) => setSelected(i, false),
  onOpen: (i) => {
    setSelected(i, true);
    post({ type: 'openRollout', index: i });
  },
});

// ---- messages ---------------------------------------------------------------------------------

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'init':
      specs = m.params;
      renderControls();
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
      app.dataset.state = view ? 'ready' : 'error';
      return;
    case 'select':
      setSelected(m.index, true);
      return;
    case 'sensitivity':
      // The read-out of the view shown, else of one already replaced: dropped.
      if (shown.current(m.seq)) renderSensitivity(m.params, m.ranges);
      return;
    case 'tokenCurves':
      curves = { key: m.key, rows: new Map(m.rows.map((r) => [r.index, r])), note: m.note };
      if (view && sameKey(view.key, m.key)) {
        renderTokenNote();
        renderRollouts(view);
      }
      return;
  }
});

// ---- sensitivity: the κ and τ intervals over which CoRE's label stays the same -------

function renderSensitivity(params: Record<string, number>, ranges: SensitivityRange[]): void {
  if (!view) return;
  clear(sensitivityBox);
  sensitivityBox.append(h('h3', {}, 'How close to flipping'));
  const dl = h('dl', { class: 'readouts' });
  for (const r of ranges) {
    const sym = r.param === 'kappa' ? 'κ' : 'τ';
    let text: string;
    let detail = '';
    if (!r.affects) text = r.param === 'tau' ? 'no effect (no confidence logged)' : 'no effect (no class of two or more)';
    else {
      text = `${r.loIsRangeEnd ? '[' : '('}${fmt(r.lo, 4)}, ${fmt(r.hi, 4)}${r.hiIsRangeEnd ? ']' : ')'}`;
      const parts: string[] = [];
      if (!r.loIsRangeEnd) parts.push(`below → ${showLabel(r.belowLabel ?? null)}`);
      if (!r.hiIsRangeEnd) parts.push(`above → ${showLabel(r.aboveLabel ?? null)}`);
      detail = parts.length ? `${parts.join(' · ')} · nearest flip ${fmt(r.distance, 4)} away` : 'no flip in the searched range';
    }
    dl.append(
      h('dt', {}, `CoRE label ${showLabel(r.label)} holds for ${sym} ∈`),
      h('dd', { id: `sensitivity-${r.param}`, 'data-lo': r.lo, 'data-hi': r.hi, 'data-lo-end': r.loIsRangeEnd, 'data-hi-end': r.hiIsRangeEnd, 'data-affects': r.affects, title: detail }, text),
    );
    if (detail) dl.append(h('dt', { class: 'small' }, ''), h('dd', { class: 'muted small', id: `sensitivity-${r.param}-detail` }, detail));
  }
  sensitivityBox.append(
    dl,
    h(
      'p',
      { class: 'muted small' },
      `at ${Object.entries(params)
        .filter(([k]) => k === 'kappa' || k === 'tau')
        .map(([k, v]) => `${k === 'kappa' ? 'κ' : 'τ'} = ${fmt(v, 3)}`)
        .join(', ')}; κ searched over [0, 1], τ over [0.001, 100] (grid, then bisection to 1e-4)`,
    ),
  );
}

// ---- controls ---------------------------------------------------------------------------------

function visibleSpecs(): ParamSpec[] {
  if (!view) return specs;
  const available = new Set(view.operators.filter((o) => o.available).map((o) => o.operator));
  return specs.filter((s) => s.operators.some((o) => available.has(o)));
}

let pendingFrame = 0;
function scheduleRescore(): void {
  if (pendingFrame) return;
  pendingFrame = requestAnimationFrame(() => {
    pendingFrame = 0;
    post({ type: 'setParams', seq: requests.issue(), params: { ...sliderValues } });
    saveState();
  });
}

function renderControls(): void {
  clear(controls);
  controls.append(h('h3', {}, 'What if'));
  for (const s of visibleSpecs()) {
    const value = view?.params[s.key] ?? sliderValues[s.key] ?? s.default;
    const id = `slider-${s.key}`;
    const out = h('output', { id: `${id}-value`, for: id, class: 'value' }, fmt(value, 3));
    const input = h('input', { type: 'range', id, min: s.min, max: s.max, step: s.step, value, 'data-param': s.key, 'aria-describedby': `${id}-desc` });
    input.value = String(value);
    input.addEventListener('input', () => {
      const v = Number(input.value);
      sliderValues[s.key] = v;
      out.textContent = fmt(v, 3);
      scheduleRescore();
    });
    controls.append(
      h('div', { class: 'slider' }, h('label', { for: id, title: s.description }, `${s.label} `, h('span', { class: 'muted' }, `(${s.key}, default ${fmt(s.default, 3)})`)), input, out),
      h('div', { id: `${id}-desc`, class: 'muted small' }, s.description),
    );
    if (s.key === 'tau' && view?.health) controls.append(premiseNote(view));
  }
  const reset = h('vscode-button', { id: 'reset', secondary: true, title: 'Reset every parameter to its configured default' }, 'Reset to defaults');
  reset.addEventListener('click', () => {
    for (const k of Object.keys(sliderValues)) delete sliderValues[k];
    post({ type: 'resetParams', seq: requests.issue() });
  });
  controls.append(h('div', { class: 'buttons' }, reset));
}

/** The confidence premise next to τ (docs/health.md §3): τ only matters when confidence separates
 * the roll-outs within a question. */
function premiseNote(v: QuestionView): HTMLElement {
  const hl = v.health!;
  const warn = hl.runVerdict === 'uninformative' || hl.runVerdict === 'misleading';
  return h(
    'div',
    { id: 'tau-auroc', class: `muted small ${warn ? 'premise-warning' : ''}`, title: hl.runMessage ?? '' },
    `confidence AUROC (in the vote's class): this question ${fmt(hl.auroc, 2)} · run ${fmt(hl.runAuroc, 2)}${hl.runVerdict && hl.runVerdict !== 'too few' ? ` (${hl.runVerdict}${hl.runVerdict === 'uninformative' ? ': τ is moot' : hl.runVerdict === 'misleading' ? ': confidence favours wrong roll-outs' : ''})` : ''}`,
  );
}

function syncSliders(v: QuestionView): void {
  for (const s of specs) {
    const input = document.getElementById(`slider-${s.key}`) as HTMLInputElement | null;
    const out = document.getElementById(`slider-${s.key}-value`);
    const value = v.params[s.key];
    if (!input || value === undefined) continue;
    if (document.activeElement !== input) input.value = String(value);
    if (out) out.textContent = fmt(value, 3);
  }
}

// ---- rendering --------------------------------------------------------------------------------

function renderView(v: QuestionView): void {
  const sameQuestion = view && view.key.runId === v.key.runId && view.key.step === v.key.step && view.key.questionId === v.key.questionId;
  const prevVisible = view
    ? visibleSpecs()
        .map((s) => s.key)
        .join()
    : '';
  view = v;
  if (!sameQuestion) {
    selected = -1;
    clear(sensitivityBox);
  }
  for (const k of Object.keys(sliderValues)) if (v.params[k] !== undefined) sliderValues[k] = v.params[k];
  message.textContent = '';
  renderTokenNote();
  app.dataset.state = 'ready';
  app.dataset.questionId = v.key.questionId;
  app.dataset.step = String(v.key.step);
  if (
    !sameQuestion ||
    visibleSpecs()
      .map((s) => s.key)
      .join() !== prevVisible
  )
    renderControls();
  else syncSliders(v);
  const t0 = performance.now();
  renderHeader(v);
  renderStrip(v);
  renderTheory(v);
  renderClasses(v);
  renderRollouts(v);
  const t1 = performance.now();
  graph.render(v);
  document.body.dataset.renderParts = `tables ${(t1 - t0).toFixed(1)} graph ${(performance.now() - t1).toFixed(1)}`;
  if (selected >= 0) graph.select(selected);
  graphBox.dataset.nodes = String(graph.nodeCount());
  graphBox.dataset.classes = String(graph.classCount());
  saveState();
}

function saveState(): void {
  vscode.setState({ key: view?.key ?? null, params: Object.keys(sliderValues).length ? { ...sliderValues } : null });
}

function badge(text: string, cls: string, id?: string): HTMLElement {
  return h('span', { class: `badge ${cls}`, id }, text);
}

function renderHeader(v: QuestionView): void {
  clear(header);
  header.append(
    h('h2', { id: 'question-id' }, v.key.questionId),
    h(
      'div',
      { class: 'meta' },
      h('span', {}, `${v.runLabel} · step ${v.key.step} · N = ${v.n}`),
      badge(REGIME_LABELS[v.regime] ?? v.regime, `regime-${v.regime}`, 'regime'),
      v.overturn ? badge('CoRE overturns the vote', 'overturn', 'overturn') : badge('CoRE agrees with the vote', 'agree', 'overturn'),
      v.mismatches > 0 ? badge(`${v.mismatches} reward mismatch${v.mismatches > 1 ? 'es' : ''} vs ${OP_LABELS[v.configuredOperator]}`, 'mismatch', 'mismatches') : null,
      v.confidence === 'missing' ? badge('no confidence logged: CoRE runs as EC', 'muted-badge') : null,
      v.health?.degeneratePlurality
        ? badge(
            `degenerate plurality: the vote's class is mostly empty, truncated or repetition-collapsed roll-outs${v.health.rescuedBy.length ? ` (${v.health.rescuedBy.map((o) => OP_LABELS[o]).join(', ')} pick another answer)` : ''}`,
            'degenerate',
            'degenerate-plurality',
          )
        : null,
    ),
  );
  if (v.prompt) header.append(h('p', { class: 'prompt', id: 'prompt' }, v.prompt.length > 600 ? v.prompt.slice(0, 599) + '…' : v.prompt));
  if (v.groundTruth !== null)
    header.append(
      h(
        'p',
        { class: 'muted small', id: 'ground-truth' },
        'Ground truth (diagnostic only, never an input): ',
        ...(v.groundTruthForms?.length ? v.groundTruthForms.flatMap((f, i) => [...(i ? [' or '] : []), h('code', {}, f)]) : [h('code', {}, v.groundTruth)]),
      ),
    );
}

function renderStrip(v: QuestionView): void {
  clear(strip);
  for (const o of v.operators) {
    const correct = o.correct === null ? null : o.correct ? ' ✓' : ' ✗';
    strip.append(
      h(
        'div',
        {
          class: `op ${o.available ? '' : 'unavailable'} ${o.flipsMajority ? 'flip' : ''} ${o.operator === v.configuredOperator ? 'configured' : ''}`,
          'data-op': o.operator,
          title: o.note ?? (o.available ? '' : 'unavailable'),
        },
        h('div', { class: 'op-name' }, OP_LABELS[o.operator], o.operator === v.configuredOperator ? h('span', { class: 'muted small' }, ' (configured)') : null),
        h('div', { class: 'label', 'data-value': o.label ?? '' }, o.available ? showLabel(o.label) : 'n/a'),
        h(
          'div',
          { class: 'muted small' },
          o.available ? `gate ${fmt(o.gate, 3)}${o.flipsMajority ? ' · flips the vote' : ''}` : (o.note ?? 'unavailable'),
          correct ? h('span', { class: o.correct ? 'ok' : 'bad', title: 'against the logged ground truth (diagnostic)' }, correct) : null,
        ),
      ),
    );
  }
}

function renderTheory(v: QuestionView): void {
  clear(theory);
  const r = v.recovery;
  const rows: [string, string, string, string?][] = [
    ['gate', 'CoRE gate w_q = x*ᵀ A x*', fmt(v.gate, 4), String(v.gate)],
    ['regime', 'regime', REGIME_LABELS[v.regime] ?? v.regime],
    ['iterations', 'replicator iterations', v.iterations === null ? '—' : String(v.iterations)],
  ];
  if (r) {
    rows.push(['threshold', `recovery threshold (w̄_w/w̄_*)·(m−1)/(n*−1)·c_w, m=${r.m}, n*=${r.nStar}`, fmt(r.threshold, 4), r.threshold === null ? '' : String(r.threshold)]);
    rows.push(['cstar', 'runner-up coherence c*', fmt(r.cStar, 4), String(r.cStar)]);
    rows.push(['margin', 'margin c* − threshold (> 0: the runner-up can win)', fmt(r.margin, 4), r.margin === null ? '' : String(r.margin)]);
  }
  theory.append(
    h('h3', {}, 'Consensus'),
    h('dl', { class: 'readouts' }, ...rows.flatMap(([id, label, text, value]) => [h('dt', {}, label), h('dd', { id: `readout-${id}`, 'data-value': value ?? text }, text)])),
  );
}

function renderClasses(v: QuestionView): void {
  clear(classTable);
  classTable.append(h('thead', {}, h('tr', {}, ...['class', 'answer', 'size', 'mass Σx*', 'mean affinity', 'label of', 'ground truth'].map((t) => h('th', { scope: 'col' }, t)))));
  const body = h('tbody');
  for (const c of v.classes) {
    body.append(
      h(
        'tr',
        { 'data-class': c.index },
        h('td', {}, String(c.index + 1)),
        h('td', { class: 'answer' }, h('code', {}, c.answer === '' ? '(empty)' : c.answer)),
        h('td', { 'data-col': 'size', 'data-value': c.size }, String(c.size)),
        h('td', { 'data-col': 'mass', 'data-value': c.mass }, fmt(c.mass, 4)),
        h('td', { 'data-col': 'affinity', 'data-value': c.meanAffinity }, c.size > 1 ? fmt(c.meanAffinity, 4) : '—'),
        h('td', {}, c.labelOf.map((o) => OP_LABELS[o]).join(', ')),
        h('td', { class: 'muted' }, c.matchesGroundTruth === null ? '' : c.matchesGroundTruth ? '✓ (diagnostic)' : ''),
      ),
    );
  }
  classTable.append(body);
}

interface Column {
  id: string;
  title: string;
  tip?: string;
  value(r: RolloutRow): number | string | null;
  text(r: RolloutRow): string;
}

const FLAG_LABELS: Record<string, string> = { empty: 'empty', noAnswer: 'no answer', truncated: 'truncated', repetitive: 'repetitive', nearDuplicate: 'near-dup', unformatted: 'unformatted' };
const isDegenerateRow = (r: RolloutRow): boolean => (r.flags ?? []).some((f) => f === 'empty' || f === 'truncated' || f === 'repetitive');

function columns(v: QuestionView): Column[] {
  const ops = v.operators.filter((o) => o.available).map((o) => o.operator);
  const cfg = v.configuredOperator;
  return [
    { id: 'index', title: '#', value: (r) => r.index, text: (r) => String(r.index) },
    { id: 'answer', title: 'answer', value: (r) => r.answer ?? '', text: (r) => (r.answer === null ? '(no answer)' : showLabel(r.answer)) },
    { id: 'confidence', title: 'conf. c', tip: 'mean token log-prob', value: (r) => r.confidence, text: (r) => fmt(r.confidence, 3) },
    ...(curveOf(v, -1) !== undefined
      ? [
          {
            id: 'curve',
            title: 'by position',
            tip: 'token probability by position, certain at the top (sorts by the least confident stretch)',
            value: (r: RolloutRow) => lowestPoint(curveOf(v, r.index)?.curve ?? [])?.logprob ?? null,
            text: () => '',
          },
        ]
      : []),
    { id: 'weight', title: 'weight w', tip: 'CoRE confidence weight exp((c − max c)/τ)', value: (r) => r.weight, text: (r) => fmt(r.weight, 3) },
    { id: 'mass', title: 'x*', tip: 'equilibrium mass; ● dominant set', value: (r) => r.mass, text: (r) => `${fmt(r.mass, 4)}${r.inSupport ? ' ●' : ''}` },
    ...ops.map((op) => ({
      id: `reward-${op}`,
      title: `R ${OP_LABELS[op]}`,
      tip: `reward under ${OP_LABELS[op]}`,
      value: (r: RolloutRow) => r.rewards[op] ?? null,
      text: (r: RolloutRow) => fmt(r.rewards[op], 3),
    })),
    {
      id: 'advantage',
      title: `A ${OP_LABELS[cfg]}`,
      tip: `GRPO advantage under ${OP_LABELS[cfg]} (the configured operator)`,
      value: (r) => r.advantages[cfg] ?? null,
      text: (r) => fmt(r.advantages[cfg], 3),
    },
    ...(v.rollouts.some((r) => r.loggedAdvantage !== undefined && r.loggedAdvantage !== null)
      ? [
          {
            id: 'logged-adv',
            title: 'logged A',
            tip: 'the advantage the trainer logged: what trained (A above is recomputed with its formula)',
            value: (r: RolloutRow) => r.loggedAdvantage ?? null,
            text: (r: RolloutRow) => fmt(r.loggedAdvantage ?? null, 3),
          },
        ]
      : []),
    { id: 'logged', title: 'logged R', tip: 'the reward the training loop logged', value: (r) => r.loggedReward, text: (r) => fmt(r.loggedReward, 3) },
    { id: 'mismatch', title: '≠', tip: `logged reward differs from ${OP_LABELS[cfg]}'s by more than 1e-6`, value: (r) => (r.mismatch ? 1 : 0), text: (r) => (r.mismatch ? '≠' : '') },
    {
      id: 'flags',
      title: 'health',
      tip: 'run-health flags: empty box, no answer, truncated, repetition-collapsed, near-duplicate, unformatted (answer found without a box)',
      value: (r) => (r.flags ?? []).join(' '),
      text: (r) => (r.flags ?? []).map((f) => FLAG_LABELS[f] ?? f).join(' · '),
    },
    { id: 'preview', title: 'text', value: (r) => r.preview, text: (r) => r.preview },
  ];
}

/** Roll-out `index`'s token curve for this view; index -1: whether any roll-out has one (else undefined). */
function curveOf(v: QuestionView, index: number): TokenCurve | undefined {
  if (!curves || !sameKey(curves.key, v.key)) return undefined;
  if (index < 0) return [...curves.rows.values()].find((c) => c.curve.length > 0);
  const c = curves.rows.get(index);
  return c?.curve.length ? c : undefined;
}

function renderTokenNote(): void {
  const note = view && curves && sameKey(curves.key, view.key) ? curves.note : null;
  tokenNote.textContent = note ?? '';
  tokenNote.hidden = !note;
}

function sortedRows(v: QuestionView, cols: Column[]): RolloutRow[] {
  const col = cols.find((c) => c.id === sortCol) ?? cols[0];
  return [...v.rollouts].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    if (x === y) return a.index - b.index;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sortDir;
  });
}

function renderRollouts(v: QuestionView): void {
  clear(rolloutTable);
  const cols = columns(v);
  const headRow = h('tr');
  for (const c of cols) {
    const btn = h('button', { class: 'sort', title: c.tip ?? `sort by ${c.title}`, 'data-col': c.id }, c.title, sortCol === c.id ? (sortDir > 0 ? ' ▲' : ' ▼') : '');
    btn.addEventListener('click', () => {
      if (sortCol === c.id) sortDir = -sortDir;
      else {
        sortCol = c.id;
        sortDir = c.id === 'index' || c.id === 'answer' ? 1 : -1;
      }
      renderRollouts(view!);
    });
    headRow.append(h('th', { scope: 'col', 'aria-sort': sortCol === c.id ? (sortDir > 0 ? 'ascending' : 'descending') : 'none' }, btn));
  }
  rolloutTable.append(h('thead', {}, headRow));
  const body = h('tbody');
  const rows = sortedRows(v, cols);
  for (const r of rows) {
    const tr = h('tr', {
      'data-index': r.index,
      tabindex: (selected >= 0 ? r.index === selected : r === rows[0]) ? 0 : -1,
      class: `${r.inSupport ? 'support' : ''} ${r.mismatch ? 'mismatch' : ''} ${isDegenerateRow(r) ? 'degenerate' : ''} ${r.index === selected ? 'selected' : ''}`,
      'aria-selected': r.index === selected ? 'true' : 'false',
      title: 'Enter: open the text · L: reveal in the log file',
    });
    for (const c of cols) {
      const val = c.value(r);
      const td = h('td', { 'data-col': c.id, 'data-value': val === null ? '' : String(val), class: c.id === 'preview' ? 'preview' : c.id === 'answer' ? 'answer' : 'num' }, c.text(r));
      if (c.id === 'curve') {
        const tc = curveOf(v, r.index);
        if (tc) td.append(tokenSparkline(tc));
      }
      tr.append(td);
    }
    const log = h('button', { class: 'link', title: 'Reveal in log file', 'aria-label': `Reveal roll-out ${r.index} in the log file`, disabled: !r.hasSource, 'data-action': 'reveal' }, 'log');
    log.addEventListener('click', (e) => {
      e.stopPropagation();
      post({ type: 'revealInLog', index: r.index });
    });
    tr.append(h('td', {}, log));
    tr.addEventListener('click', () => {
      setSelected(r.index, false);
      post({ type: 'openRollout', index: r.index });
    });
    body.append(tr);
  }
  rolloutTable.append(body);
}

rolloutTable.addEventListener('keydown', (e) => {
  const tr = (e.target as HTMLElement).closest('tr[data-index]') as HTMLTableRowElement | null;
  if (!tr) return;
  const rows = [...rolloutTable.querySelectorAll<HTMLTableRowElement>('tbody tr[data-index]')];
  const i = rows.indexOf(tr);
  let next = -1;
  switch (e.key) {
    case 'ArrowDown':
      next = Math.min(rows.length - 1, i + 1);
      break;
    case 'ArrowUp':
      next = Math.max(0, i - 1);
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = rows.length - 1;
      break;
    case 'Enter':
    case ' ':
      post({ type: 'openRollout', index: Number(tr.dataset.index) });
      e.preventDefault();
      return;
    case 'l':
    case 'L':
      post({ type: 'revealInLog', index: Number(tr.dataset.index) });
      return;
    default:
      return;
  }
  e.preventDefault();
  const target = rows[next];
  if (target) setSelected(Number(target.dataset.index), true);
});

function setSelected(index: number, focus: boolean): void {
  selected = index;
  for (const tr of rolloutTable.querySelectorAll<HTMLTableRowElement>('tbody tr[data-index]')) {
    const on = Number(tr.dataset.index) === index;
    tr.classList.toggle('selected', on);
    tr.setAttribute('aria-selected', on ? 'true' : 'false');
    tr.tabIndex = on ? 0 : -1;
    if (on && focus) {
      tr.focus({ preventScroll: true });
      tr.scrollIntoView({ block: 'nearest' });
    }
  }
  graph.select(index);
}

// Follow the theme: VS Code swaps the body's class (vscode-light / vscode-dark / vscode-high-contrast).
new MutationObserver(() => graph.restyle()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
window.addEventListener('resize', () => view && graph.render(view));

// Tests and power users: where a roll-out's node is on screen.
(window as unknown as { consensusLens: unknown }).consensusLens = {
  nodePosition: (i: number) => graph.nodePosition(i),
  graphInView: () => graph.inView(),
};

const restored = vscode.getState();
if (restored?.params) Object.assign(sliderValues, restored.params);
post({ type: 'ready', state: restored ?? null });
