// The roll-out graph: answer classes as compound nodes, roll-outs sized by equilibrium mass x*,
// dominant-set members outlined, within-class edges weighted by affinity. Positions are computed
// here (a packed preset layout: no iterative layout, so switching questions stays fast).
import cytoscape from 'cytoscape';
import type { QuestionView } from '../src/protocol/messages';
import { classLabel, graphStyle, layout, type ThemeColors } from './graphLayout';

export interface GraphCallbacks {
  onSelect(index: number): void;
  onOpen(index: number): void;
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

export function themeColors(): ThemeColors {
  return {
    fg: cssVar('--vscode-foreground', '#333'),
    muted: cssVar('--vscode-descriptionForeground', '#777'),
    node: cssVar('--vscode-charts-blue', '#3794ff'),
    label: cssVar('--vscode-charts-green', '#388a34'),
    degenerate: cssVar('--vscode-charts-red', '#f14c4c'),
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
      const degenerate = (r.flags ?? []).some((f) => f === 'empty' || f === 'truncated' || f === 'repetitive');
      return [
        r.classIndex < 0 ? 'noanswer' : r.classIndex === coreClass ? 'label' : '',
        degenerate ? 'degenerate' : '',
        r.inSupport ? 'support' : '',
        r.mismatch ? 'mismatch' : '',
        i === this.selected ? 'selected' : '',
      ]
        .filter(Boolean)
        .join(' ');
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
      els.push({
        group: 'nodes',
        data: { id: `r${r.index}`, parent: r.classIndex >= 0 ? `c${r.classIndex}` : 'none', size: size(r.mass), index: r.index },
        position: pos.get(`r${r.index}`),
        classes: nodeClasses(r.index),
      });
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
