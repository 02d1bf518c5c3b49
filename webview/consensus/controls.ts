// The what-if sliders: one per parameter of an operator that can run on the question shown, a
// slider move re-scored on the host (one request per animation frame), reset to defaults.
import type { ParamSpec, QuestionView } from '../../src/protocol/messages';
import { h, clear, fmt } from '../dom';
import { panel, post, requests, saveState } from './panel-state';

export function visibleSpecs(): ParamSpec[] {
  const view = panel.view;
  if (!view) return panel.specs;
  const available = new Set(view.operators.filter((o) => o.available).map((o) => o.operator));
  return panel.specs.filter((s) => s.operators.some((o) => available.has(o)));
}

let pendingFrame = 0;
function scheduleRescore(): void {
  if (pendingFrame) return;
  pendingFrame = requestAnimationFrame(() => {
    pendingFrame = 0;
    post({ type: 'setParams', seq: requests.issue(), params: { ...panel.sliderValues } });
    saveState();
  });
}

export function renderControls(controls: HTMLElement): void {
  const view = panel.view;
  const sliderValues = panel.sliderValues;
  clear(controls);
  controls.append(h('h3', {}, 'What if'));
  for (const s of visibleSpecs()) {
    const value = view?.params[s.key] ?? sliderValues[s.key] ?? s.default;
    const id = `slider-${s.key}`;
    const out = h('output', { id: `${id}-value`, for: id, class: 'value' }, fmt(value, 3));
    const input = h('input', { type: 'range', id, min: s.min, max: s.max, step: s.step, value, 'data-param': s.key, 'aria-describedby': `${id}-desc` });
    input.value = String(value);
    input.addEventListener('input', () => {
      const v = Number(input.value);
      sliderValues[s.key] = v;
      out.textContent = fmt(v, 3);
      scheduleRescore();
    });
    controls.append(
      h('div', { class: 'slider' }, h('label', { for: id, title: s.description }, `${s.label} `, h('span', { class: 'muted' }, `(${s.key}, default ${fmt(s.default, 3)})`)), input, out),
      h('div', { id: `${id}-desc`, class: 'muted small' }, s.description),
    );
    if (s.key === 'tau' && view?.health) controls.append(premiseNote(view));
  }
  const reset = h('vscode-button', { id: 'reset', secondary: true, title: 'Reset every parameter to its configured default' }, 'Reset to defaults');
  reset.addEventListener('click', () => {
    for (const k of Object.keys(sliderValues)) delete sliderValues[k];
    post({ type: 'resetParams', seq: requests.issue() });
  });
  controls.append(h('div', { class: 'buttons' }, reset));
}

/** The confidence premise next to τ (docs/health.md §3): τ only matters when confidence separates
 * the roll-outs within a question. */
function premiseNote(v: QuestionView): HTMLElement {
  const hl = v.health!;
  const warn = hl.runVerdict === 'uninformative' || hl.runVerdict === 'misleading';
  return h(
    'div',
    { id: 'tau-auroc', class: `muted small ${warn ? 'premise-warning' : ''}`, title: hl.runMessage ?? '' },
    `confidence AUROC (in the vote's class): this question ${fmt(hl.auroc, 2)} · run ${fmt(hl.runAuroc, 2)}${hl.runVerdict && hl.runVerdict !== 'too few' ? ` (${hl.runVerdict}${hl.runVerdict === 'uninformative' ? ': τ is moot' : hl.runVerdict === 'misleading' ? ': confidence favours wrong roll-outs' : ''})` : ''}`,
  );
}

export function syncSliders(v: QuestionView): void {
  for (const s of panel.specs) {
    const input = document.getElementById(`slider-${s.key}`) as HTMLInputElement | null;
    const out = document.getElementById(`slider-${s.key}-value`);
    const value = v.params[s.key];
    if (!input || value === undefined) continue;
    if (document.activeElement !== input) input.value = String(value);
    if (out) out.textContent = fmt(value, 3);
  }
}
