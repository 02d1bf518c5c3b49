// Per step: the mean CoRE gate and the mean majority ratio.
import { chart, cssVar } from '../chart-kit';
import type { StepChart } from '../dash-context';

export const renderGateChart: StepChart = (grid, { model: m, labels }) => {
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
};
