// Per step: each operator's pseudo-label accuracy against logged ground truth (a diagnostic; never
// inferred), as a chart and, for screen readers and tests, as a table.
import { formatAccuracy } from '../../../src/engine/browser';
import { OPERATOR_LABELS } from '../../../src/protocol/messages';
import { h } from '../../dom';
import { chart, opLine } from '../chart-kit';
import type { StepChart } from '../dash-context';

export const renderAccuracyChart: StepChart = (grid, { model: m, labels, operators, body }) => {
  if (m.hasTruth) {
    const accOps = operators.filter((o) => m.steps.some((s) => s.accuracy[o] !== undefined));
    const c = chart('accuracy', grid, {
      type: 'line',
      data: { labels, datasets: accOps.map((o) => ({ label: OPERATOR_LABELS[o], data: m.steps.map((s) => s.accuracy[o] ?? null), ...opLine(o) })) },
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
                return `${OPERATOR_LABELS[o]}: ${formatAccuracy(s.accuracy[o], s.accuracyGroups[o], s.withTruth)} of ${s.withTruth} with ground truth`;
              },
            },
          },
        },
        scales: { y: { min: 0, max: 1 }, x: { title: { display: true, text: 'step' } } },
      },
    });
    // Past four operators the legend wraps to three rows and leaves the plot a strip: a taller box.
    if (accOps.length > 4) (c.canvas.parentElement as HTMLElement).classList.add('tall');
    // The same figures as text (screen readers, tests): one row per step.
    const t = h(
      'table',
      { class: 'grid', id: 'accuracy-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'step'), h('th', {}, 'with ground truth'), ...accOps.map((o) => h('th', { scope: 'col' }, OPERATOR_LABELS[o])))),
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
};
