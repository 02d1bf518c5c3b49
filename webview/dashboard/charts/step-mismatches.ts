// Per step: roll-outs whose logged reward differs from the configured operator.
import { chart, cssVar } from '../chart-kit';
import type { StepChart } from '../dash-context';

export const renderMismatchChart: StepChart = (grid, { model: m, labels }) => {
  chart('mismatches', grid, {
    type: 'bar',
    data: { labels, datasets: [{ label: 'reward mismatches (roll-outs)', data: m.steps.map((s) => s.mismatches), backgroundColor: cssVar('charts-red') }] },
    options: {
      maintainAspectRatio: false,
      plugins: { title: { display: true, text: 'roll-outs whose logged reward differs from the configured operator' } },
      scales: { y: { beginAtZero: true }, x: { title: { display: true, text: 'step' } } },
    },
  });
};
