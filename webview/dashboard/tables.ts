// The dashboard's two tables: the κ × τ sweep heatmap and the operator agreement matrix. Every
// value comes from the host (src/protocol/dashboard-messages.ts); strings go into the DOM as text.
import { h, clear, fmt } from '../dom';
import { formatAccuracy } from '../../src/engine/browser';
import { SWEEP_OPERATORS, type DashModel, type DashSweep, type DashWebviewMessage } from '../../src/protocol/dashboard-messages';
import { OPERATOR_LABELS, type OperatorId } from '../../src/protocol/messages';

/** The κ × τ heatmap of the last sweep of this run (or its Run button alone). */
export function renderSweep(body: HTMLElement, sweep: DashSweep | null, model: DashModel | null, post: (m: DashWebviewMessage) => void): void {
  clear(body);
  const opSelect = h('select', { id: 'sweep-operator', 'aria-label': 'Operator to sweep' });
  for (const o of SWEEP_OPERATORS) opSelect.append(h('option', { value: o, selected: (sweep?.operator ?? 'core') === o }, OPERATOR_LABELS[o]));
  const run = h('button', { id: 'run-sweep', class: 'button' }, 'Run 6 × 6 sweep');
  run.addEventListener('click', () => post({ type: 'runSweep', operator: opSelect.value as OperatorId }));
  body.append(h('div', { class: 'row' }, opSelect, run));
  if (!sweep || (model && sweep.runId !== model.runId)) {
    body.append(h('p', { class: 'muted' }, 'Not run yet for this run (it re-scores every group 36 times in the worker threads).'));
    return;
  }
  const s = sweep;
  const truth = s.cells.some((c) => c.withTruth > 0);
  const value = (c: DashSweep['cells'][number]) => (truth ? (c.withTruth ? c.correct / c.withTruth : null) : c.groups ? c.flips / c.groups : null);
  const vals = s.cells.map(value).filter((v): v is number => v !== null);
  const lo = Math.min(...vals);
  const hi = Math.max(...vals);
  const table = h('table', { class: 'heatmap', id: 'sweep-table', 'data-metric': truth ? 'accuracy' : 'flips' });
  table.append(
    h('caption', {}, `${OPERATOR_LABELS[s.operator]}: ${truth ? 'pseudo-label accuracy (logged ground truth)' : 'share of pseudo-labels that differ from the vote'} · ${fmt(s.ms / 1000, 1)} s`),
  );
  table.append(h('thead', {}, h('tr', {}, h('th', {}, 'κ \\ τ'), ...s.taus.map((t) => h('th', { scope: 'col' }, fmt(t, 2))))));
  const tb = h('tbody');
  for (const k of s.kappas) {
    const tr = h('tr', {}, h('th', { scope: 'row' }, fmt(k, 2)));
    for (const t of s.taus) {
      const c = s.cells.find((x) => x.kappa === k && x.tau === t)!;
      const v = value(c);
      const share = v === null || hi === lo ? 0 : (v - lo) / (hi - lo);
      const td = h(
        'td',
        {
          'data-kappa': k,
          'data-tau': t,
          'data-value': v ?? '',
          title: `κ = ${k}, τ = ${t}: ${c.flips} of ${c.groups} differ from the vote; mean gate ${fmt(c.groups ? c.gateSum / c.groups : null, 3)}${c.withTruth ? `; accuracy ${fmt((100 * c.correct) / c.withTruth, 1)}%` : ''}`,
        },
        v === null ? '—' : truth ? `${fmt(100 * v, 1)}%` : `${fmt(100 * v, 1)}%`,
      );
      td.style.background = `color-mix(in srgb, var(--vscode-charts-${truth ? 'green' : 'purple'}) ${Math.round(10 + 70 * share)}%, transparent)`;
      tr.append(td);
    }
    tb.append(tr);
  }
  table.append(tb);
  body.append(table);
}

/** How often each pair of operators picks the same label, and each one's accuracy against logged ground truth. */
export function renderAgreement(body: HTMLElement, m: DashModel): void {
  clear(body);
  const a = m.agreement;
  const ran = a.operators.map((_, i) => a.both[i][i] > 0);
  const idx = a.operators.map((_, i) => i).filter((i) => ran[i]);
  const table = h('table', { class: 'heatmap', id: 'agreement-table' });
  table.append(
    h('thead', {}, h('tr', {}, h('th', {}, ''), ...idx.map((i) => h('th', { scope: 'col' }, OPERATOR_LABELS[a.operators[i]])), m.hasTruth ? h('th', { scope: 'col' }, 'vs ground truth') : null)),
  );
  const tb = h('tbody');
  for (const i of idx) {
    const tr = h('tr', { 'data-op': a.operators[i] }, h('th', { scope: 'row' }, OPERATOR_LABELS[a.operators[i]]));
    for (const j of idx) {
      const r = a.rates[i][j];
      const td = h('td', { 'data-op': a.operators[j], 'data-value': r ?? '', title: `${a.both[i][j]} questions where both ran` }, r === null ? '—' : `${fmt(100 * r, 1)}%`);
      if (r !== null) td.style.background = `color-mix(in srgb, var(--vscode-charts-blue) ${Math.round(10 + 60 * r)}%, transparent)`;
      tr.append(td);
    }
    if (m.hasTruth)
      tr.append(
        h(
          'td',
          {
            class: 'num',
            'data-col': 'truth',
            'data-value': a.accuracy[i] ?? '',
            'data-groups': a.withTruth[i],
            title: `over the ${a.withTruth[i]} of ${m.withTruth} questions with logged ground truth where it ran`,
          },
          formatAccuracy(a.accuracy[i], a.withTruth[i], m.withTruth, '—'),
        ),
      );
    tb.append(tr);
  }
  table.append(tb);
  body.append(table);
  const missing = a.operators.filter((_, i) => !ran[i]);
  if (missing.length) body.append(h('p', { class: 'muted small' }, `Did not run on this run (data not logged): ${missing.map((o) => OPERATOR_LABELS[o]).join(', ')}.`));
}
