// The roll-out graph: answer classes as compound nodes, roll-outs sized by equilibrium mass x*,
// dominant-set members outlined, within-class edges weighted by affinity. Positions are computed
// here (a packed preset layout: no iterative layout, so switching questions stays fast).
import cytoscape from 'cytoscape';
import type { QuestionView } from '../src/protocol/messages';

export interface GraphCallbacks {
  onSelect(index: number): void;
  onOpen(index: number): void;
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

export function themeColors() {
  return {
    fg: cssVar('--vscode-foreground', '#333'),
    muted: cssVar('--vscode-descriptionForeground', '#777'),
    node: cssVar('--vscode-charts-blue', '#3794ff'),
    label: cssVar('--vscode-charts-green', '#388a34'),
    other: cssVar('--vscode-charts-orange', '#d18616'),
    none: cssVar('--vscode-disabledForeground', '#999'),
    support: cssVar('--vscode-charts-purple', '#b180d7'),
    select: cssVar('--vscode-focusBorder', '#0090f1'),
    edge: cssVar('--vscode-editorIndentGuide-activeBackground1', cssVar('--vscode-descriptionForeground', '#999')),
    group: cssVar('--vscode-editorWidget-background', '#f3f3f3'),
    groupBorder: cssVar('--vscode-widget-border', cssVar('--vscode-panel-border', '#ccc')),
    font: cssVar('--vscode-font-family', 'sans-serif'),
  };
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
  const groups: { id: string; label: string; members: number[] }[] = view.classes.map((c) => ({ id: `c${c.index}`, label: classLabel(c.answer, c.size), members: view.rollouts.filter((r) => r.classIndex === c.index).map((r) => r.index) }));
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

export type ThemeColors = ReturnType<typeof themeColors>;

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

export class RolloutGraph {
  private cy: cytoscape.Core | null = null;
  private shownKey = '';
  private selected = -1;
  private lastSize = { w: -1, h: -1 };

  constructor(
    private readonly container: HTMLElement,
    private readonly cb: GraphCallbacks,
  ) {}

  private style(): cytoscape.StylesheetJson {
    return graphStyle(themeColors());
  }

  restyle(): void {
    this.cy?.style(this.style());
  }

  render(view: QuestionView): void {
    const key = `${view.key.runId}|${view.key.step}|${view.key.questionId}|${view.n}`;
    const maxMass = Math.max(1e-12, ...view.rollouts.map((r) => r.mass ?? 0));
    const coreClass = view.operators.find((o) => o.operator === 'core')?.labelClass ?? -1;
    const size = (m: number | null): number => (m === null ? 14 : 8 + 34 * Math.sqrt(Math.max(0, m) / maxMass));
    const nodeClasses = (i: number): string => {
      const r = view.rollouts[i];
      return [r.classIndex < 0 ? 'noanswer' : r.classIndex === coreClass ? 'label' : '', r.inSupport ? 'support' : '', r.mismatch ? 'mismatch' : '', i === this.selected ? 'selected' : ''].filter(Boolean).join(' ');
    };
    const ws = view.edges.map((e) => e.weight);
    const wMin = Math.min(...ws, 1);
    const wMax = Math.max(...ws, 0);
    const scale = (w: number): number => (wMax > wMin ? (w - wMin) / (wMax - wMin) : 1);

    if (this.cy && key === this.shownKey) {
      // Same question re-scored: update sizes, classes and weights in place.
      this.cy.batch(() => {
        for (const r of view.rollouts) {
          const n = this.cy!.getElementById(`r${r.index}`);
          n.data('size', size(r.mass));
          n.classes(nodeClasses(r.index));
        }
        view.classes.forEach((c) => this.cy!.getElementById(`c${c.index}`).classes(c.index === coreClass ? 'winner' : ''));
        for (const e of view.edges) {
          const el = this.cy!.getElementById(`e${e.source}-${e.target}`);
          el.data('width', 0.4 + 3 * scale(e.weight));
          el.data('opacity', 0.15 + 0.6 * scale(e.weight));
        }
      });
      // Larger nodes (κ → 1 concentrates x* on fewer roll-outs) grow their class box: keep the
      // whole graph in view instead of cutting the box off at the edge.
      if (!this.inView()) this.cy.fit(undefined, 16);
      return;
    }
    this.shownKey = key;
    this.selected = -1;
    const { pos, slots } = layout(view);
    const els: cytoscape.ElementDefinition[] = [];
    for (const c of view.classes) {
      els.push({ group: 'nodes', data: { id: `c${c.index}`, label: classLabel(c.answer, c.size), labelWidth: slots.get(`c${c.index}`)?.labelWidth }, classes: c.index === coreClass ? 'winner' : '' });
    }
    if (view.rollouts.some((r) => r.classIndex < 0)) els.push({ group: 'nodes', data: { id: 'none', label: 'no answer', labelWidth: slots.get('none')?.labelWidth } });
    for (const r of view.rollouts) {
      els.push({ group: 'nodes', data: { id: `r${r.index}`, parent: r.classIndex >= 0 ? `c${r.classIndex}` : 'none', size: size(r.mass), index: r.index }, position: pos.get(`r${r.index}`), classes: nodeClasses(r.index) });
    }
    for (const e of view.edges) {
      els.push({ group: 'edges', data: { id: `e${e.source}-${e.target}`, source: `r${e.source}`, target: `r${e.target}`, width: 0.4 + 3 * scale(e.weight), opacity: 0.15 + 0.6 * scale(e.weight) } });
    }
    if (!this.cy) {
      this.cy = cytoscape({
        container: this.container,
        elements: els,
        style: this.style(),
        layout: { name: 'preset' },
        minZoom: 0.2,
        maxZoom: 4,
        wheelSensitivity: 0.3,
        boxSelectionEnabled: false,
        autoungrabify: true,
        hideEdgesOnViewport: true,
        textureOnViewport: true,
        motionBlur: false,
        pixelRatio: 1,
      });
      this.cy.on('tap', 'node', (ev) => {
        const i = ev.target.data('index');
        if (typeof i === 'number') this.cb.onOpen(i);
      });
      this.cy.on('mouseover', 'node', (ev) => {
        const i = ev.target.data('index');
        if (typeof i === 'number') this.cb.onSelect(i);
      });
    } else {
      this.cy.batch(() => {
        this.cy!.elements().remove();
        this.cy!.add(els);
      });
    }
    const rect = this.container.getBoundingClientRect();
    if (rect.width !== this.lastSize.w || rect.height !== this.lastSize.h) {
      this.cy.resize();
      this.lastSize = { w: rect.width, h: rect.height };
    }
    this.cy.fit(undefined, 16);
  }

  select(index: number): void {
    if (!this.cy) return;
    this.cy.batch(() => {
      if (this.selected >= 0) this.cy!.getElementById(`r${this.selected}`).removeClass('selected');
      this.selected = index;
      if (index >= 0) this.cy!.getElementById(`r${index}`).addClass('selected');
    });
  }

  /** Screen position of a roll-out's node (tests click it). */
  nodePosition(index: number): { x: number; y: number } | null {
    const n = this.cy?.getElementById(`r${index}`);
    if (!n || n.empty()) return null;
    const p = n.renderedPosition();
    const rect = this.container.getBoundingClientRect();
    return { x: rect.left + p.x, y: rect.top + p.y };
  }

  /** Whether every element, labels included, is drawn inside the container. */
  inView(): boolean {
    if (!this.cy) return true;
    const bb = this.cy.elements().renderedBoundingBox({ includeLabels: true });
    return bb.x1 >= -1 && bb.y1 >= -1 && bb.x2 <= this.cy.width() + 1 && bb.y2 <= this.cy.height() + 1;
  }

  nodeCount(): number {
    return this.cy ? this.cy.nodes().filter((n) => !n.isParent()).length : 0;
  }
  classCount(): number {
    return this.cy ? this.cy.nodes().filter((n) => n.isParent()).length : 0;
  }
}
