// The run view (browser): one run opened from its log file, or two runs (or two operators on
// one run) side by side — per-step series on one step axis, each run's alarms and learning
// signal, the questions where the labels part (a click shows the question in both runs side by
// side). Draws what the host computed (src/protocol/compare-messages.ts); every string from the log goes
// into the DOM as text, never as HTML.
import './main.css';
import { Chart, CategoryScale, Legend, LineController, LineElement, LinearScale, PointElement, Title, Tooltip, type ChartConfiguration } from 'chart.js';
import type { CompareHostMessage, CompareWebviewMessage, PairSide, RunViewModel } from '../../src/protocol/compare-messages';
import { h, clear, fmt, showLabel } from '../dom';
import { OPERATOR_STYLES } from '../dashboard/style';
import type { OperatorId } from '../../src/protocol/messages';

Chart.register(CategoryScale, Legend, LineController, LineElement, LinearScale, PointElement, Title, Tooltip);

const vscode = acquireVsCodeApi<{ alignBy?: 'step' | 'rollouts' } | undefined>();
const post = (m: CompareWebviewMessage): void => vscode.postMessage(m);
const charts = new Map<string, Chart>();
let model: RunViewModel | null = null;
let pair: { index: number; sides: [PairSide | null, PairSide | null] } | null = null;
/** The series' x axis: the step, or the roll-outs each run has seen by then (runs of other batch sizes line up). */
let alignBy: 'step' | 'rollouts' = vscode.getState()?.alignBy === 'rollouts' ? 'rollouts' : 'step';

const app = document.getElementById('app')!;
clear(app);
const status = h('div', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' });
const header = h('header', { class: 'header' });
const summary = h('div', { id: 'summary', class: 'summary' });
const seriesBox = h('section', { id: 'series', class: 'card' });
const alarmsBox = h('section', { id: 'alarms', class: 'card' });
const signalBox = h('section', { id: 'signal', class: 'card' });
const partBox = h('section', { id: 'parting', class: 'card' });
const pairBox = h('section', { id: 'pair', class: 'card' });
app.append(header, status, summary, seriesBox, alarmsBox, signalBox, partBox, pairBox);

function cssVar(name: string, fallback = '#888'): string {
  return getComputedStyle(document.body).getPropertyValue(`--vscode-${name}`).trim() || fallback;
}
const SIDE_COLORS = ['charts-blue', 'charts-orange'];
const TAGS = ['A', 'B'];

function chart(id: string, parent: HTMLElement, config: ChartConfiguration): Chart {
  charts.get(id)?.destroy();
  const canvas = h('canvas', { id: `chart-${id}`, role: 'img', 'aria-label': id });
  parent.append(h('div', { class: 'chart' }, canvas));
  const c = new Chart(canvas, config);
  charts.set(id, c);
  return c;
}

const SERIES: { id: keyof RunViewModel['runs'][number]['series']; label: string; unit?: boolean }[] = [
  { id: 'label_accuracy', label: 'label accuracy', unit: true },
  { id: 'reward_accuracy', label: 'reward accuracy', unit: true },
  { id: 'majority_ratio', label: 'majority ratio', unit: true },
  { id: 'gate', label: 'mean CoRE gate', unit: true },
  { id: 'signal_groups', label: 'groups with signal', unit: true },
];

function render(): void {
  const m = model;
  if (!m) return;
  Chart.defaults.color = cssVar('foreground');
  Chart.defaults.borderColor = cssVar('widget-border', cssVar('panel-border', '#8884'));
  const two = m.runs.length === 2;
  app.dataset.state = 'ready';
  app.dataset.runs = String(m.runs.length);
  clear(header);
  const compare = h('button', { class: 'button', id: 'compare-with' }, 'Compare with…');
  compare.addEventListener('click', () => post({ type: 'compareWith' }));
  const dash = h('button', { class: 'button', id: 'open-dashboard' }, 'Open dashboard');
  dash.addEventListener('click', () => post({ type: 'openDashboard', side: 0 }));
  header.append(h('h1', {}, two ? 'Runs side by side' : 'Run'), dash, compare);

  clear(summary);
  m.runs.forEach((r, k) => {
    const acc = r.labelAccuracy.value === null ? 'no ground truth' : `${(100 * r.labelAccuracy.value).toFixed(1)}% (${r.labelAccuracy.correct}/${r.labelAccuracy.over})`;
    summary.append(
      h(
        'div',
        { class: 'stat side-stat', 'data-side': TAGS[k] },
        h('div', { class: 'muted small' }, `${two ? `${TAGS[k]}: ` : ''}${r.name}`),
        h('div', {}, `${r.operator} · ${r.steps} steps · ${r.groups} groups`),
        h('div', { class: 'small' }, `label accuracy ${acc} · reward accuracy ${fmt(r.rewardAccuracy, 2)}`),
      ),
    );
  });
  if (m.shared)
    summary.append(
      h(
        'div',
        { class: 'stat', id: 'shared-stat' },
        h('div', { class: 'muted small' }, 'questions both saw'),
        h('div', {}, `${m.shared.questions} questions · ${m.shared.pairs} pairs`),
        h('div', { class: 'small' }, `labels part on ${m.shared.part} (truth with A ${m.shared.aRight}, with B ${m.shared.bRight}, neither ${m.shared.neitherRight})`),
      ),
    );

  // Series: one chart per read-out, each run a line on the common step axis (or roll-outs seen).
  clear(seriesBox);
  const byRollouts = alignBy === 'rollouts';
  seriesBox.dataset.align = alignBy;
  const align = h('select', { id: 'align-by', 'aria-label': 'Align the runs by' });
  align.append(h('option', { value: 'step', selected: !byRollouts }, 'step'), h('option', { value: 'rollouts', selected: byRollouts }, 'roll-outs seen'));
  align.addEventListener('change', () => {
    alignBy = align.value === 'rollouts' ? 'rollouts' : 'step';
    vscode.setState({ alignBy });
    render();
  });
  seriesBox.append(
    h('div', { class: 'row' }, h('h2', {}, two ? `Per step, aligned by ${byRollouts ? 'roll-outs seen' : 'step'}` : 'Per step'), h('label', { class: 'inline small' }, 'x axis: ', align)),
    h(
      'p',
      { class: 'muted small', id: 'accuracy-definitions' },
      'Label accuracy: share of questions whose pseudo-label equals the logged ground truth. Reward accuracy (TTRL): share of roll-outs whose pseudo-reward (1 in the label\u2019s class) equals the reward the true answer gives — high under a wrong label when most roll-outs are wrong anyway. Groups with signal: share of groups whose GRPO advantage is non-zero (docs/health.md §6).',
    ),
  );
  const grid = h('div', { class: 'grid3' });
  seriesBox.append(grid);
  const labels = m.steps.map(String);
  for (const s of SERIES) {
    const box = h('div', { class: 'compare-series', 'data-series': s.id });
    grid.append(box);
    chart(`series-${s.id}`, box, {
      type: 'line',
      data: {
        labels: byRollouts ? undefined : labels,
        datasets: m.runs.map((r, k) => {
          const c = cssVar(SIDE_COLORS[k]);
          const seen = r.series.rollouts_seen;
          return {
            label: `${two ? `${TAGS[k]} ` : ''}${r.name} (${r.operator})`,
            // By roll-outs seen: each run's own points at its cumulative roll-out count.
            data: byRollouts ? r.series[s.id].flatMap((y, i) => (seen[i] === null ? [] : [{ x: seen[i] as number, y }])) : r.series[s.id],
            borderColor: c,
            backgroundColor: c,
            borderDash: k ? [6, 3] : undefined,
            pointStyle: k ? 'rect' : 'circle',
            pointRadius: 2,
            spanGaps: true,
          };
        }),
      },
      options: {
        maintainAspectRatio: false,
        plugins: { title: { display: true, text: s.label }, legend: { display: two, labels: { boxWidth: 12 } } },
        scales: {
          x: byRollouts ? { type: 'linear', title: { display: true, text: 'roll-outs seen' } } : { title: { display: true, text: 'step' } },
          y: s.unit ? { min: 0, max: 1 } : { beginAtZero: true },
        },
      },
    } as ChartConfiguration);
  }

  clear(alarmsBox);
  alarmsBox.append(h('h2', {}, 'Alarms (run health, docs/health.md)'));
  m.runs.forEach((r, k) => {
    const ul = h('ul', { class: 'health-list', 'data-side': TAGS[k] });
    for (const a of r.alarms) ul.append(h('li', { class: 'alarm', 'data-series': a.series, 'data-step': a.step }, `⚠ ${two ? `${TAGS[k]}: ` : ''}${a.message}`));
    if (!r.alarms.length) ul.append(h('li', { class: 'ok' }, `${two ? `${TAGS[k]}: ` : ''}no alarm`));
    for (const n of r.notes) ul.append(h('li', { class: 'muted small' }, n));
    alarmsBox.append(ul);
  });

  clear(signalBox);
  signalBox.append(
    h('h2', {}, 'The learning signal left'),
    h(
      'p',
      { class: 'muted small' },
      'Per step, the share of groups with a non-zero GRPO advantage under each operator (solid: the run\u2019s own operator); dashed grey: the saturated share, where every roll-out gives the same answer and the vote teaches nothing.',
    ),
  );
  const sg = h('div', { class: 'grid2' });
  signalBox.append(sg);
  m.signal.forEach((ls, k) => {
    if (!ls) return;
    const box = h('div', { class: 'signal-chart', 'data-side': TAGS[k] });
    sg.append(box);
    const at = new Map(m.steps.map((st, i) => [st, i]));
    const align = (vals: (number | null)[], own: number[]) => {
      const out: (number | null)[] = m.steps.map(() => null);
      own.forEach((st, i) => (out[at.get(st)!] = vals[i]));
      return out;
    };
    // The signal arrays run along the run's own steps; the run's steps are those with data.
    const own = m.steps.filter((_, i) => m.runs[k].series.rollouts_seen[i] !== null);
    chart(`signal-${k}`, box, {
      type: 'line',
      data: {
        labels,
        datasets: [
          ...ls.operators.map((op) => {
            const c = cssVar(OPERATOR_STYLES[op as OperatorId]?.color ?? 'charts-blue');
            return {
              label: op === ls.configured ? `${op} (the run's)` : op,
              data: align(ls.groups[op]!, own),
              borderColor: c,
              backgroundColor: c,
              borderWidth: op === ls.configured ? 2.5 : 1.2,
              pointRadius: 1.5,
              spanGaps: true,
            };
          }),
          {
            label: 'saturated',
            data: align(ls.saturated, own),
            borderColor: cssVar('descriptionForeground'),
            backgroundColor: cssVar('descriptionForeground'),
            borderDash: [5, 4],
            pointRadius: 0,
            spanGaps: true,
          },
        ],
      },
      options: {
        maintainAspectRatio: false,
        plugins: { title: { display: true, text: `${two ? `${TAGS[k]}: ` : ''}${m.runs[k].name}` } },
        scales: { y: { min: 0, max: 1 }, x: { title: { display: true, text: 'step' } } },
      },
    });
  });

  renderParting();
  renderPair();
}

function renderParting(): void {
  const m = model!;
  clear(partBox);
  if (!m.shared) {
    partBox.hidden = true;
    return;
  }
  partBox.hidden = false;
  const [A, B] = m.runs;
  partBox.append(
    h('h2', {}, `Where the labels part (${m.disagreementsTotal}${m.disagreements.length < m.disagreementsTotal ? `, first ${m.disagreements.length}` : ''})`),
    h(
      'p',
      { class: 'muted small' },
      `On the questions both runs saw, paired by question id occurrence by occurrence. A: ${A.name} (${A.operator}); B: ${B.name} (${B.operator}). Click a row for the question in both runs.`,
    ),
  );
  if (!m.disagreements.length) {
    partBox.append(h('p', { class: 'ok', id: 'no-parting' }, 'The labels agree on every shared question.'));
    return;
  }
  const table = h('table', { class: 'grid', id: 'parting-table' });
  table.append(h('thead', {}, h('tr', {}, h('th', {}, 'step'), h('th', {}, 'question'), h('th', {}, 'label A'), h('th', {}, 'label B'), h('th', {}, 'ground truth'), h('th', {}, 'agrees with'))));
  const tb = h('tbody');
  m.disagreements.forEach((d, i) => {
    const who = d.agrees === null ? '—' : d.agrees === 'neither' ? 'neither' : d.agrees === 'both' ? 'both' : d.agrees.toUpperCase();
    const tr = h(
      'tr',
      { class: `parting${pair?.index === i ? ' selected' : ''}`, 'data-index': i, 'data-question': d.questionId, 'data-step': d.stepA, tabindex: 0 },
      h('td', { class: 'num' }, d.stepA === d.stepB ? String(d.stepA) : `${d.stepA} / ${d.stepB}`),
      h('td', {}, d.questionId),
      h('td', { class: `answer ${d.agrees === 'a' || d.agrees === 'both' ? 'right' : d.agrees ? 'wrong' : ''}` }, showLabel(d.labelA)),
      h('td', { class: `answer ${d.agrees === 'b' || d.agrees === 'both' ? 'right' : d.agrees ? 'wrong' : ''}` }, showLabel(d.labelB)),
      h('td', { class: 'answer' }, d.truth === null ? '—' : d.truth),
      h('td', {}, who),
    );
    const open = () => post({ type: 'openPair', index: i });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => e.key === 'Enter' && open());
    tb.append(tr);
  });
  table.append(tb);
  partBox.append(h('div', { class: 'scroll' }, table));
}

function renderPair(): void {
  clear(pairBox);
  pairBox.hidden = !pair;
  if (!pair || !model) return;
  const d = model.disagreements[pair.index];
  pairBox.append(h('h2', {}, `Question ${d?.questionId ?? ''} in both runs`));
  const grid = h('div', { class: 'grid2', id: 'pair-sides' });
  pairBox.append(grid);
  pair.sides.forEach((s, k) => {
    const box = h('div', { class: 'side', 'data-side': TAGS[k] });
    grid.append(box);
    if (!s) {
      box.append(h('p', { class: 'muted' }, `${TAGS[k]}: the question is no longer in the run`));
      return;
    }
    const open = h('button', { class: 'link' }, 'open in the consensus panel');
    open.addEventListener('click', () => post({ type: 'openQuestion', side: k as 0 | 1, step: s.step, questionId: s.questionId }));
    box.append(
      h('h3', {}, `${TAGS[k]}: ${s.run} — ${s.operator}`),
      h('div', { class: 'small' }, `step ${s.step} · ${s.n} roll-outs · label ${showLabel(s.label)} · CoRE gate ${fmt(s.gate, 3)}${s.groundTruth !== null ? ` · ground truth ${s.groundTruth}` : ''}`),
    );
    const t = h('table', { class: 'grid' });
    t.append(h('thead', {}, h('tr', {}, h('th', {}, 'answer'), h('th', {}, 'roll-outs'), h('th', {}, ''))));
    const tb = h('tbody');
    for (const c of s.classes)
      tb.append(
        h(
          'tr',
          { class: c.isLabel ? 'label-class' : '' },
          h('td', { class: 'answer' }, c.answer),
          h('td', { class: 'num' }, String(c.size)),
          h('td', {}, [c.isLabel ? 'label' : '', c.matchesGroundTruth ? '≡ ground truth' : ''].filter(Boolean).join(' · ')),
        ),
      );
    t.append(tb);
    box.append(t, open);
  });
  pairBox.scrollIntoView({ block: 'nearest' });
}

window.addEventListener('message', (e: MessageEvent<CompareHostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'model':
      model = m.model;
      if (pair && pair.index >= model.disagreements.length) pair = null;
      render();
      return;
    case 'pair':
      pair = { index: m.index, sides: m.sides };
      renderParting();
      renderPair();
      return;
    case 'busy':
      status.textContent = m.what ? `${m.what}…` : '';
      document.body.dataset.busy = m.what ? 'true' : 'false';
      return;
    case 'error':
      status.textContent = m.message;
      app.dataset.error = m.message;
      return;
  }
});

// Follow the theme: VS Code swaps the body's class.
new MutationObserver(() => model && render()).observe(document.body, { attributes: true, attributeFilter: ['class'] });

post({ type: 'ready' });
