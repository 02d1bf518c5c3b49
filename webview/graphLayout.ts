// The roll-out graph's layout and stylesheet, without the DOM (the unit tests run them in Node).
import type cytoscape from 'cytoscape';
import type { QuestionView } from '../src/protocol/messages';

/** The theme colours the graph is drawn with (read from --vscode-* variables by graph.ts). */
export interface ThemeColors {
  fg: string;
  muted: string;
  node: string;
  label: string;
  /** Run health: an empty, truncated or repetition-collapsed roll-out. */
  degenerate: string;
  other: string;
  none: string;
  support: string;
  select: string;
  edge: string;
  group: string;
  groupBorder: string;
  font: string;
}

/** The label of an answer class's box: the answer (at most 40 characters) and its size. */
export function classLabel(answer: string, size: number): string {
  return `${answer === '' ? '(empty)' : answer.length > 40 ? answer.slice(0, 39) + '…' : answer}  ×${size}`;
}

/** Width a label needs at the boxes' 12 px font (a generous 7.5 px per character, plus margins). */
export const labelWidth = (label: string): number => 7.5 * [...label].length + 12;

/** A class's slot in the layout: the box and the label above it, which no other slot overlaps. */
export interface Slot {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  /** The label's maximum width (cytoscape's text-max-width): the slot's width. */
  labelWidth: number;
}

const LABEL_H = 18;
const GAP = 30;

/**
 * Circle-packed positions: classes in rows by size, members on rings around each class centre.
 * Each class gets a slot as wide as its box or its label, whichever is wider, so long answers do
 * not run into the neighbouring box.
 */
export function layout(view: QuestionView): { pos: Map<string, { x: number; y: number }>; slots: Map<string, Slot> } {
  const pos = new Map<string, { x: number; y: number }>();
  const slots = new Map<string, Slot>();
  const groups: { id: string; label: string; members: number[] }[] = view.classes.map((c) => ({
    id: `c${c.index}`,
    label: classLabel(c.answer, c.size),
    members: view.rollouts.filter((r) => r.classIndex === c.index).map((r) => r.index),
  }));
  const none = view.rollouts.filter((r) => r.classIndex < 0).map((r) => r.index);
  if (none.length) groups.push({ id: 'none', label: 'no answer', members: none });
  groups.sort((a, b) => b.members.length - a.members.length);
  const spacing = 34;
  const radiusOf = (m: number): number => {
    // rings of 1, 6, 12, 18, ... members
    let r = 0;
    let left = m - 1;
    let ring = 1;
    while (left > 0) {
      left -= 6 * ring;
      r = ring;
      ring++;
    }
    return (r + 0.8) * spacing;
  };
  const width = Math.max(600, Math.sqrt(view.n) * 110);
  let x = 0;
  let y = 0;
  let rowH = 0;
  for (const g of groups) {
    const R = radiusOf(g.members.length);
    const W = Math.max(2 * R, labelWidth(g.label));
    if (x > 0 && x + W > width) {
      x = 0;
      y += rowH + GAP;
      rowH = 0;
    }
    const cx = x + W / 2;
    const cy = y + LABEL_H + R;
    let k = 0;
    let ring = 0;
    while (k < g.members.length) {
      const count = ring === 0 ? 1 : 6 * ring;
      for (let j = 0; j < count && k < g.members.length; j++, k++) {
        const a = (2 * Math.PI * j) / count + ring * 0.3;
        pos.set(`r${g.members[k]}`, { x: cx + ring * spacing * Math.cos(a), y: cy + ring * spacing * Math.sin(a) });
      }
      ring++;
    }
    slots.set(g.id, { x0: x, x1: x + W, y0: y, y1: y + LABEL_H + 2 * R, labelWidth: W });
    x += W + GAP;
    rowH = Math.max(rowH, LABEL_H + 2 * R);
  }
  return { pos, slots };
}

/**
 * The graph's stylesheet. Mappings to data fields apply only to elements that have the field
 * (`node[size]`: roll-outs, not the class boxes): cytoscape warns once per element and style pass
 * about a mapping without its data, which was hundreds of console warnings per session.
 */
export function graphStyle(c: ThemeColors): cytoscape.StylesheetJson {
  return [
    { selector: 'node', style: { 'background-color': c.node, 'border-width': 0, label: '' } },
    { selector: 'node[size]', style: { width: 'data(size)', height: 'data(size)' } },
    { selector: 'node.label', style: { 'background-color': c.label } },
    { selector: 'node.noanswer', style: { 'background-color': c.none, shape: 'diamond' } },
    { selector: 'node.support', style: { 'border-width': 3, 'border-color': c.support } },
    { selector: 'node.mismatch', style: { shape: 'triangle' } },
    // Run health: an empty, truncated or repetition-collapsed roll-out (docs/health.md §1).
    { selector: 'node.degenerate', style: { 'background-color': c.degenerate, shape: 'round-tag' } },
    { selector: 'node.selected', style: { 'overlay-color': c.select, 'overlay-opacity': 0.35, 'overlay-padding': 4 } },
    {
      selector: ':parent',
      style: {
        'background-color': c.group,
        'background-opacity': 0.6,
        'border-width': 1,
        'border-color': c.groupBorder,
        shape: 'round-rectangle',
        color: c.fg,
        'font-family': c.font,
        'font-size': 12,
        'text-valign': 'top',
        'text-halign': 'center',
        'text-margin-y': -4,
        padding: '10px',
      },
    },
    { selector: ':parent[label]', style: { label: 'data(label)' } },
    { selector: ':parent[labelWidth]', style: { 'text-wrap': 'ellipsis', 'text-max-width': 'data(labelWidth)' } },
    { selector: ':parent.winner', style: { 'border-width': 2, 'border-color': c.label } },
    { selector: 'edge', style: { width: 'data(width)', 'line-color': c.edge, opacity: 'data(opacity)', 'curve-style': 'haystack' } },
  ] as unknown as cytoscape.StylesheetJson;
}
