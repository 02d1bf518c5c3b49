// The dashboard's sections in page order. A section (dash-context.ts) is a title, a
// one-line note and a render function; a per-step chart is one function in STEP_CHARTS. Adding a
// chart: a module in webview/dashboard/charts/ and its line here (a new number from the host: its
// field in src/protocol/dashboard-messages.ts and src/extension/dashboard/dashboard-model.ts).
import { h, clear } from '../dom';
import type { DashSection, StepChart } from './dash-context';
import { renderAccuracyChart } from './charts/step-accuracy';
import { renderFamilyRows } from './charts/family-rows';
import { renderGateChart } from './charts/step-gate';
import { renderMismatchChart } from './charts/step-mismatches';
import { renderOverturnChart } from './charts/step-overturns';
import { renderRecovery } from './charts/recovery-plot';
import { renderRegimes } from './charts/regimes';
import { renderRescore } from './charts/rescore';
import { renderRolloutCount } from './charts/rollout-count';
import { renderHealth } from './health-section';
import { renderLearningSignal } from './signal';
import { renderAgreement, renderSweep } from './tables';

export const STEP_CHARTS: StepChart[] = [renderGateChart, renderOverturnChart, renderMismatchChart, renderAccuracyChart];

export const SECTIONS: DashSection[] = [
  {
    id: 'steps',
    title: 'Per step',
    note: 'Mean CoRE gate and majority ratio; pseudo-labels that differ from the vote per operator; reward mismatches; accuracy against logged ground truth (a diagnostic).',
    render(body, ctx) {
      const model = ctx.model;
      if (!model) return;
      clear(body);
      const grid = h('div', { class: 'grid2' });
      body.append(grid);
      const c = { ...ctx, model, labels: model.steps.map((s) => String(s.step)), body };
      for (const draw of STEP_CHARTS) draw(grid, c);
    },
  },
  {
    id: 'families',
    title: 'Consensus and confidence',
    note: 'Per step, one operator of each family: the pseudo-label accuracy (consensus) or top-reward accuracy (confidence) against logged ground truth, the share of groups whose GRPO advantage is non-zero, and the share of questions on which the two pick the same answer.',
    render: (body, ctx) => ctx.model && renderFamilyRows(body, ctx.model, ctx),
  },
  {
    id: 'regimes',
    title: 'Regimes',
    note: 'Saturated: the top class holds ≥ 90% of N; competence floor: < 25%; contested otherwise.',
    render: (body, ctx) => ctx.model && renderRegimes(body, ctx.model, ctx),
  },
  {
    id: 'recovery',
    title: 'Recovery region (CoRE Fig. 4)',
    note: 'One point per contested question: outnumbering ratio r = m/n* against the coherence advantage c*/c_w the runner-up has. The vote’s bar (m−1)/(n*−1) and the confidence-lowered bar (w̄_w/w̄_*)·(m−1)/(n*−1) are drawn per question; a point above its confidence bar can be recovered (the axis holds every bar; one beyond 10⁻³ or 10⁴ is an arrow at the edge). Click a point to open its question.',
    render: (body, ctx) => ctx.model && renderRecovery(body, ctx.model, ctx),
  },
  {
    id: 'sweep',
    title: 'κ × τ sweep',
    note: 'CoRE (or another operator) over a 6 × 6 grid: pseudo-labels that differ from the vote, or accuracy where ground truth is logged.',
    render: (body, ctx) => renderSweep(body, ctx.sweep, ctx.model, ctx.post),
  },
  {
    id: 'agreement',
    title: 'Operator agreement',
    note: 'Share of questions where two operators choose the same answer class (both ran); the last column is accuracy against logged ground truth.',
    render: (body, ctx) => ctx.model && renderAgreement(body, ctx.model),
  },
  {
    id: 'whatif',
    title: 'Last re-score',
    note: 'Consensus Lens: Re-score Run… compares a setting with the configured baseline. A cancelled re-score never replaces this.',
    render: (body, ctx) => renderRescore(body, ctx),
  },
  {
    id: 'health',
    title: 'Run health',
    note: 'Per-step series from the logs with change-point alarms (a permutation-calibrated CUSUM test, ≤ 5% false alarms on a stationary run), the confidence premise (within-question AUROC), reward bugs by class and degenerate pluralities — the same analysis as consensus-lens health (docs/health.md).',
    render(body, ctx) {
      if (!ctx.model) return;
      const health = ctx.model.health;
      const series = renderHealth(body, health, { ...ctx.kit, openQuestion: (step, questionId) => ctx.post({ type: 'openQuestion', step, questionId }) });
      if (!health) return;
      if (series) renderLearningSignal(body, health, ctx.kit);
      renderRolloutCount(body, health, ctx.kit);
    },
  },
];
