// The panel's roll-out graph outside the browser: its stylesheet applied by cytoscape (headless,
// styles on) raises no warnings, and the layout leaves every answer class a slot as wide as its
// label, so long answers do not overlap the neighbouring boxes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import cytoscape from 'cytoscape';
import { classLabel, graphStyle, labelWidth, layout, type Slot } from '../../webview/graphLayout';
import type { QuestionView } from '../../src/protocol/messages';

const colors = { fg: '#333', muted: '#777', node: '#3794ff', label: '#388a34', degenerate: '#f14c4c', other: '#d18616', none: '#999', support: '#b180d7', select: '#0090f1', edge: '#999', group: '#f3f3f3', groupBorder: '#ccc', font: '-apple-system, "Segoe WPC", sans-serif' };

/** A view with the fields the layout reads: classes (answer, size) and roll-outs (class). */
function view(answers: string[], sizes: number[], unanswered = 0): QuestionView {
  const rollouts: { index: number; classIndex: number }[] = [];
  sizes.forEach((n, c) => {
    for (let j = 0; j < n; j++) rollouts.push({ index: rollouts.length, classIndex: c });
  });
  for (let j = 0; j < unanswered; j++) rollouts.push({ index: rollouts.length, classIndex: -1 });
  return { n: rollouts.length, classes: answers.map((answer, index) => ({ index, answer, size: sizes[index] })), rollouts } as unknown as QuestionView;
}

test('graph stylesheet: cytoscape applies it to class boxes, roll-outs and edges without a warning', () => {
  const v = view(['12', '', '\\frac{1}{2}'], [5, 3, 2], 1);
  const { pos, slots } = layout(v);
  const els: cytoscape.ElementDefinition[] = v.classes.map((c) => ({ group: 'nodes', data: { id: `c${c.index}`, label: classLabel(c.answer, c.size), labelWidth: slots.get(`c${c.index}`)!.labelWidth } }));
  els.push({ group: 'nodes', data: { id: 'none', label: 'no answer', labelWidth: slots.get('none')!.labelWidth } });
  for (const r of v.rollouts) els.push({ group: 'nodes', data: { id: `r${r.index}`, parent: r.classIndex >= 0 ? `c${r.classIndex}` : 'none', size: 8 + r.index, index: r.index }, position: pos.get(`r${r.index}`), classes: r.index === 0 ? 'label support' : r.index === 1 ? 'degenerate' : '' });
  els.push({ group: 'edges', data: { id: 'e0-1', source: 'r0', target: 'r1', width: 1, opacity: 0.5 } });
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...a: unknown[]) => void warnings.push(a.map(String).join(' '));
  try {
    const cy = cytoscape({ headless: true, styleEnabled: true, elements: els, style: graphStyle(colors) });
    // Style passes as the panel makes them: every element's style, a re-score in place, a restyle.
    cy.elements().forEach((e) => void e.style());
    cy.batch(() => cy.nodes('[size]').forEach((n) => void n.data('size', 20)));
    cy.style(graphStyle(colors));
    cy.elements().forEach((e) => void e.style());
    assert.equal(cy.getElementById('c1').style('label'), '(empty)  ×3');
    assert.equal(Number.parseFloat(cy.getElementById('r0').style('width')), 20);
    cy.destroy();
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warnings, []);
});

test('graph layout: a class slot is as wide as its label; slots never overlap', () => {
  const long = 'x^{2}+\\frac{3}{4}y-\\sqrt{17}\\cdot\\pi+2025\\alpha';
  const v = view([long, long.replace('x', 'z'), '7', long.replace('2025', '1999'), '\\boxed{a very long textual answer here}'], [2, 2, 9, 1, 1]);
  const { slots } = layout(v);
  const list = [...slots.entries()];
  assert.equal(list.length, 5);
  for (const [id, s] of list) {
    const c = v.classes[Number(id.slice(1))];
    assert.ok(s.x1 - s.x0 >= labelWidth(classLabel(c.answer, c.size)), `${id}: ${s.x1 - s.x0} wide for "${classLabel(c.answer, c.size)}"`);
    assert.equal(s.labelWidth, s.x1 - s.x0);
  }
  const overlap = (a: Slot, b: Slot) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) assert.ok(!overlap(list[i][1], list[j][1]), `${list[i][0]} and ${list[j][0]} overlap`);
});
