// The recovery region (CoRE Fig. 4): one point per contested question, the vote's bar and the
// confidence-lowered bar per question (recovery.ts places bars beyond the axis as arrows); a click,
// or the list of buttons under the plot, opens the question.
import type { ChartDataset } from 'chart.js';
import type { DashModel, DashRecoveryPoint } from '../../../src/protocol/dashboard-messages';
import { h, clear, fmt } from '../../dom';
import { alpha } from '../chart-kit';
import { placeBar, recoveryAxis } from '../recovery';
import type { DashContext } from '../dash-context';

/** The points drawn (the page's test hooks read them). */
export let recoveryPoints: DashRecoveryPoint[] = [];

export function renderRecovery(body: HTMLElement, m: DashModel, { kit: { chart, cssVar }, post }: DashContext): void {
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
        if (el) openPoint(el.index, post);
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
    b.addEventListener('click', () => openPoint(i, post));
    ul.append(h('li', {}, b));
  });
  list.append(ul);
  body.append(list);
}

function openPoint(i: number, post: DashContext['post']): void {
  const p = recoveryPoints[i];
  if (p) post({ type: 'openQuestion', step: p.step, questionId: p.questionId });
}
