// The κ and τ intervals over which CoRE's label stays the same, after the view (the host computes
// them off its thread once the user rests on a question).
import type { SensitivityRange } from '../../src/protocol/messages';
import { h, clear, fmt, showLabel } from '../dom';
import { panel } from './panel-state';

export function renderSensitivity(sensitivityBox: HTMLElement, params: Record<string, number>, ranges: SensitivityRange[]): void {
  if (!panel.view) return;
  clear(sensitivityBox);
  sensitivityBox.append(h('h3', {}, 'How close to flipping'));
  const dl = h('dl', { class: 'readouts' });
  for (const r of ranges) {
    const sym = r.param === 'kappa' ? 'κ' : 'τ';
    let text: string;
    let detail = '';
    if (!r.affects) text = r.param === 'tau' ? 'no effect (no confidence logged)' : 'no effect (no class of two or more)';
    else {
      text = `${r.loIsRangeEnd ? '[' : '('}${fmt(r.lo, 4)}, ${fmt(r.hi, 4)}${r.hiIsRangeEnd ? ']' : ')'}`;
      const parts: string[] = [];
      if (!r.loIsRangeEnd) parts.push(`below → ${showLabel(r.belowLabel ?? null)}`);
      if (!r.hiIsRangeEnd) parts.push(`above → ${showLabel(r.aboveLabel ?? null)}`);
      detail = parts.length ? `${parts.join(' · ')} · nearest flip ${fmt(r.distance, 4)} away` : 'no flip in the searched range';
    }
    dl.append(
      h('dt', {}, `CoRE label ${showLabel(r.label)} holds for ${sym} ∈`),
      h('dd', { id: `sensitivity-${r.param}`, 'data-lo': r.lo, 'data-hi': r.hi, 'data-lo-end': r.loIsRangeEnd, 'data-hi-end': r.hiIsRangeEnd, 'data-affects': r.affects, title: detail }, text),
    );
    if (detail) dl.append(h('dt', { class: 'small' }, ''), h('dd', { class: 'muted small', id: `sensitivity-${r.param}-detail` }, detail));
  }
  sensitivityBox.append(
    dl,
    h(
      'p',
      { class: 'muted small' },
      `at ${Object.entries(params)
        .filter(([k]) => k === 'kappa' || k === 'tau')
        .map(([k, v]) => `${k === 'kappa' ? 'κ' : 'τ'} = ${fmt(v, 3)}`)
        .join(', ')}; κ searched over [0, 1], τ over [0.001, 100] (grid, then bisection to 1e-4)`,
    ),
  );
}
