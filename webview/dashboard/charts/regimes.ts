// Questions per regime: the table over the run and the stacked bars per step.
import type { DashModel } from '../../../src/protocol/dashboard-messages';
import { h, clear, fmt } from '../../dom';
import type { DashContext } from '../dash-context';

const REGIMES = ['saturated', 'contested', 'competence-floor', 'empty'];
const REGIME_COLORS: Record<string, string> = { saturated: 'charts-blue', contested: 'charts-purple', 'competence-floor': 'charts-red', empty: 'descriptionForeground' };

export function renderRegimes(body: HTMLElement, m: DashModel, { kit: { chart, cssVar } }: DashContext): void {
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
