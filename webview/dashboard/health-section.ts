// The dashboard's run-health section (docs/health.md): the alarms, the confidence premise, the
// reward-bug classes, the degenerate pluralities and one small chart per timeline series with its
// change points marked. It draws RunHealth exactly as the host computed it (the same analysis as
// `consensus-lens health`); every string goes into the DOM as text.
import type { RunHealth } from '../../src/engine/browser';
import { h, clear, fmt } from '../dom';
import type { ChartKit } from './chart-kit';

export interface HealthDeps extends ChartKit {
  openQuestion(step: number, questionId: string): void;
}

function openButton(deps: HealthDeps, step: number, questionId: string): HTMLElement {
  const b = h('button', { class: 'link', 'data-step': step, 'data-question': questionId, title: 'Open the question in the consensus panel' }, `step ${step} · ${questionId}`);
  b.addEventListener('click', () => deps.openQuestion(step, questionId));
  return b;
}

/** Draws the alarms and the series; true when the series were drawn (two steps or more). */
export function renderHealth(body: HTMLElement, health: RunHealth | undefined, deps: HealthDeps): boolean {
  clear(body);
  if (!health) {
    body.append(h('p', { class: 'muted' }, 'not computed'));
    return false;
  }
  body.dataset.alarms = String(health.alarms.length);
  const list = h('ul', { class: 'health-list', id: 'health-alarms' });
  for (const a of health.alarms) list.append(h('li', { class: 'alarm', 'data-series': a.series, 'data-step': a.step }, `⚠ ${a.message}`, h('span', { class: 'muted small' }, ` (p = ${fmt(a.p, 3)})`)));
  if (!health.alarms.length) list.append(h('li', { class: 'ok' }, health.steps.length >= 8 ? 'no alarm: no series shifted' : `no alarm (${health.steps.length} steps: change points need 8)`));
  for (const p of [health.premise.label, health.premise.truth]) {
    if (!p || p.verdict === 'too few') continue;
    list.append(h('li', { class: p.verdict === 'informative' ? '' : 'alarm', 'data-premise': p.verdict }, p.message));
  }
  for (const b of health.rewardBugs)
    list.append(h('li', { class: b.kind === 'scaled' ? '' : 'alarm', 'data-bug': b.kind }, `reward bug (${b.kind}): ${b.message} — e.g. `, openButton(deps, b.example.step, b.example.question_id)));
  const d = health.degenerate;
  if (d.pluralities) {
    const li = h(
      'li',
      { 'data-degenerate': d.pluralities },
      `degenerate pluralities: ${d.pluralities} questions whose vote class is mostly empty, truncated or repetition-collapsed roll-outs${
        Object.keys(d.rescued).length
          ? ` (another label from ${Object.entries(d.rescued)
              .map(([o, k]) => `${o} ${k}`)
              .join(', ')})`
          : ''
      }: `,
    );
    d.examples.slice(0, 5).forEach((e, i) => li.append(i ? ', ' : '', openButton(deps, e.step, e.question_id)));
    list.append(li);
  }
  for (const n of health.notes) list.append(h('li', { class: 'muted small' }, n));
  body.append(list);

  if (health.steps.length < 2) return false;
  const labels = health.steps.map(String);
  const grid = h('div', { class: 'grid3', id: 'health-series' });
  body.append(grid);
  const line = deps.cssVar('charts-blue');
  const bad = deps.cssVar('charts-red', '#f14c4c');
  for (const s of health.series) {
    const alarms = health.alarms.filter((a) => a.series === s.id);
    // The levels before and after each change (the step function the test fitted), dashed.
    let level: (number | null)[] | null = null;
    if (alarms.length) {
      level = health.steps.map(() => null);
      const cuts = alarms.map((a) => health.steps.indexOf(a.step)).filter((k) => k >= 0);
      const bounds = [0, ...cuts, health.steps.length];
      for (let b = 0; b + 1 < bounds.length; b++) {
        const xs = s.values.slice(bounds[b], bounds[b + 1]).filter((v): v is number => v !== null);
        const mean = xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null;
        for (let k = bounds[b]; k < bounds[b + 1]; k++) level[k] = mean;
      }
    }
    const marks = health.steps.map((st, k) => (alarms.some((a) => a.step === st) ? s.values[k] : null));
    const box = h('div', { class: 'health-series', 'data-series': s.id, 'data-alarm': alarms.length ? alarms.map((a) => a.step).join(',') : '' });
    grid.append(box);
    deps.chart(`health-${s.id}`, box, {
      type: 'line',
      data: {
        labels,
        datasets: [
          { label: s.label, data: s.values, borderColor: line, backgroundColor: line, pointRadius: 1.5, spanGaps: true },
          ...(level ? [{ label: 'level', data: level, borderColor: bad, backgroundColor: bad, borderDash: [5, 4], pointRadius: 0, borderWidth: 1.5 }] : []),
          ...(alarms.length ? [{ label: 'alarm', data: marks, borderColor: bad, backgroundColor: bad, pointRadius: 7, pointStyle: 'triangle' as const, showLine: false }] : []),
        ],
      },
      options: {
        maintainAspectRatio: false,
        plugins: { title: { display: true, text: alarms.length ? `⚠ ${s.label}` : s.label, color: alarms.length ? bad : undefined }, legend: { display: false } },
        // Shares, ratios, AUROC, accuracy, lengths and counts are non-negative (the mean log-prob is not).
        scales: { x: { title: { display: true, text: 'step' } }, y: s.id === 'confidence' ? {} : { beginAtZero: true } },
      },
    });
  }
  return true;
}
