// The last re-score of the run (Consensus Lens: Re-score Run…): the setting against the configured
// baseline — flips, advantage sign changes, gates, accuracy — per step and as histograms, the
// questions whose label flips, and the export buttons.
import type { ChartDataset } from 'chart.js';
import type { DashHistogram } from '../../../src/protocol/dashboard-messages';
import { OPERATOR_LABELS } from '../../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../../dom';
import { alpha, type ChartKit } from '../chart-kit';
import type { DashContext } from '../dash-context';
import { stat } from '../stat';

function histogramChart(chart: ChartKit['chart'], id: string, parent: HTMLElement, title: string, hs: { label: string; h: DashHistogram; color: string }[]): void {
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

export function renderRescore(body: HTMLElement, { whatif: w, model, post, kit: { chart, cssVar } }: DashContext): void {
  clear(body);
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
      stat('setting', `${OPERATOR_LABELS[w.operator]} ${changed}`),
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
  histogramChart(chart, 'reward-shift', grid, 'reward shift ΔR per roll-out', [{ label: 'ΔR', h: w.histograms.rewardShift, color: cssVar('charts-orange') }]);
  histogramChart(chart, 'advantage-shift', grid, 'advantage shift ΔA per roll-out', [{ label: 'ΔA', h: w.histograms.advantageShift, color: cssVar('charts-blue') }]);
  histogramChart(chart, 'gates', grid, 'gate per question', [
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
