// Per step: each operator's pseudo-labels that differ from the vote.
import { OPERATOR_LABELS } from '../../../src/protocol/messages';
import { chart, opLine } from '../chart-kit';
import type { StepChart } from '../dash-context';

export const renderOverturnChart: StepChart = (grid, { model: m, labels, operators }) => {
  const ops = operators.filter((o) => o !== 'majority' && m.steps.some((s) => s.overturns[o] !== undefined));
  chart('overturns', grid, {
    type: 'line',
    data: { labels, datasets: ops.map((o) => ({ label: `${OPERATOR_LABELS[o]} ≠ vote`, data: m.steps.map((s) => s.overturns[o] ?? null), ...opLine(o) })) },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'pseudo-labels that differ from the vote' } },
      scales: { y: { beginAtZero: true, title: { display: true, text: 'questions' } }, x: { title: { display: true, text: 'step' } } },
    },
  });
};
