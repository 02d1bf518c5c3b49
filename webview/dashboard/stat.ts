// One figure of a summary row: a muted label over its value (text only).
import { h } from '../dom';

export function stat(label: string, value: string): HTMLElement {
  return h('div', { class: 'stat', 'data-stat': label }, h('div', { class: 'muted small' }, label), h('div', { class: 'value' }, value));
}
