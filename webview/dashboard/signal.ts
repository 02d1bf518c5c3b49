// The dashboard's learning-signal charts (docs/health.md §6): per step, the share of groups whose
// GRPO advantage is non-zero under each operator with the saturated share, and the share of
// roll-outs with a non-zero advantage; the whole run's two shares as `consensus-lens health` prints
// them; the one-line definitions of label and reward accuracy. Draws RunHealth.learningSignal as
// the host computed it (the engine's values, the CLI's).
import type { RunHealth } from '../../src/engine/browser';
import { h } from '../dom';
import type { ChartKit } from './chart-kit';
import { OPERATOR_STYLES } from './style';
import type { OperatorId } from '../../src/protocol/messages';

export function renderLearningSignal(body: HTMLElement, health: RunHealth, deps: ChartKit): void {
  const ls = health.learningSignal;
  if (!ls || health.steps.length < 1) return;
  // The whole run as `consensus-lens health` prints it: groups, then roll-outs.
  const total = ls.operators.map((op) => `${op} ${fmt(ls.total[op]?.groups)} of groups (${fmt(ls.total[op]?.rollouts)} of roll-outs)`).join(', ');
  const box = h('div', { class: 'health-signal', id: 'health-signal', 'data-configured': ls.configured });
  const rolloutBox = h('div', { class: 'health-signal', id: 'health-signal-rollouts' });
  body.append(
    h('h3', {}, 'The learning signal left'),
    h(
      'p',
      { class: 'muted small' },
      `Share of each step's groups whose GRPO advantage A_i·w_q is non-zero — the part of the batch that still teaches; a group whose roll-outs are rewarded alike teaches nothing. The run trains with ${ls.configured} (its series is alarm-tested as "groups with signal"). Dashed: the saturated share (every roll-out gives the same answer); CoRE's graded rewards can keep signal there. See docs/health.md §6.`,
    ),
    box,
    h('p', { class: 'muted small', id: 'signal-total' }, `Whole run: ${total}.`),
    h(
      'p',
      { class: 'muted small' },
      "Share of each step's roll-outs whose effective advantage is non-zero: a group with signal can still teach through few of its roll-outs (CoRE's graded rewards reach more of them than the vote's 0/1).",
    ),
    rolloutBox,
    h(
      'p',
      { class: 'muted small', id: 'accuracy-definitions' },
      'Label accuracy: share of questions whose pseudo-label equals the logged ground truth. Reward accuracy (TTRL): share of roll-outs whose pseudo-reward (1 in the label\u2019s class) equals the reward the true answer gives — high under a wrong label when most roll-outs are wrong anyway (docs/health.md §6).',
    ),
  );
  const sat = deps.cssVar('descriptionForeground', '#888');
  deps.chart('health-signal', box, {
    type: 'line',
    data: {
      labels: health.steps.map(String),
      datasets: [
        ...ls.operators.map((op) => {
          const c = deps.cssVar(OPERATOR_STYLES[op as OperatorId]?.color ?? 'charts-blue');
          return {
            label: op === ls.configured ? `${op} (configured)` : op,
            data: ls.groups[op]!,
            borderColor: c,
            backgroundColor: c,
            borderWidth: op === ls.configured ? 2.5 : 1.5,
            pointRadius: 1.5,
            spanGaps: true,
          };
        }),
        { label: 'saturated share', data: ls.saturated, borderColor: sat, backgroundColor: sat, borderDash: [5, 4], pointRadius: 0, borderWidth: 1.5, spanGaps: true },
      ],
    },
    options: { maintainAspectRatio: false, scales: { y: { min: 0, max: 1, title: { display: true, text: 'share of groups' } }, x: { title: { display: true, text: 'step' } } } },
  });
  deps.chart('health-signal-rollouts', rolloutBox, {
    type: 'line',
    data: {
      labels: health.steps.map(String),
      datasets: ls.operators.map((op) => {
        const c = deps.cssVar(OPERATOR_STYLES[op as OperatorId]?.color ?? 'charts-blue');
        return {
          label: op === ls.configured ? `${op} (configured)` : op,
          data: ls.rollouts[op] ?? [],
          borderColor: c,
          backgroundColor: c,
          borderWidth: op === ls.configured ? 2.5 : 1.5,
          pointRadius: 1.5,
          spanGaps: true,
        };
      }),
    },
    options: { maintainAspectRatio: false, scales: { y: { min: 0, max: 1, title: { display: true, text: 'share of roll-outs' } }, x: { title: { display: true, text: 'step' } } } },
  });
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(2));
