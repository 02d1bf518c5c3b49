// "How many roll-outs?" (CoRE Fig. 2), part of the run-health section: label quality per operator
// against the number of roll-outs N′, from seeded subsamples the host re-scored.
import type { RunHealth } from '../../../src/engine/browser';
import type { OperatorId } from '../../../src/protocol/messages';
import { h } from '../../dom';
import type { ChartKit } from '../chart-kit';
import { OPERATOR_STYLES } from '../style';

/** "How many roll-outs?" (CoRE Fig. 2): label quality per operator against N′. */
export function renderRolloutCount(body: HTMLElement, health: RunHealth, deps: ChartKit): void {
  const w = health.rolloutsWhatIf;
  if (w) {
    const box = h('div', { class: 'health-whatif', id: 'health-whatif' });
    body.append(
      h('h3', {}, `How many roll-outs? (CoRE Fig. 2) — ${w.metric === 'accuracy' ? 'pseudo-label accuracy against logged ground truth' : 'agreement with the full-N label'}`),
      h(
        'p',
        { class: 'muted small' },
        `${w.draws} seeded subsamples per N′ of ${w.groups} groups, re-scored with the group's features (TF-IDF idf not refit: the full group's, see docs/health.md §5).`,
      ),
      box,
    );
    deps.chart('health-whatif', box, {
      type: 'line',
      data: {
        labels: w.sizes.map((x) => (x === 'full' ? 'full N' : `N′ = ${x}`)),
        datasets: Object.entries(w.values).map(([op, vals]) => ({
          label: op,
          data: vals!,
          borderColor: deps.cssVar(OPERATOR_STYLES[op as OperatorId]?.color ?? 'charts-blue'),
          backgroundColor: deps.cssVar(OPERATOR_STYLES[op as OperatorId]?.color ?? 'charts-blue'),
        })),
      },
      options: { maintainAspectRatio: false, scales: { y: { min: 0, max: 1, title: { display: true, text: w.metric } }, x: { title: { display: true, text: 'roll-outs per question' } } } },
    });
  }
}
