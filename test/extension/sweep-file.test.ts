// A cluster sweep's result file (src/extension/dashboard/sweep-file.ts) becomes the dashboard's
// κ × τ heatmap cells: the counts and sums as the driver merged them; anything else is refused
// with the file and line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSweepFile } from '../../src/extension/dashboard/sweep-file';

const header = JSON.stringify({ consensus_lens_sweep: 1, run: '/shared/runs/a', groups: 10, ms: 1234 });
const row = (kappa: number, tau: number, operator = 'core', extra: Record<string, number> = {}) =>
  JSON.stringify({ params: { kappa, tau, ...extra }, operator, groups: 10, flips_vs_majority: Math.round(kappa * 10), gate_sum: 7.5, with_truth: 8, correct: 6 });

test('a κ × τ grid becomes the heatmap cells, counts and sums as written', () => {
  const text = [header, row(0, 0.25), row(0, 1), row(0.5, 0.25), row(0.5, 1), row(0, 0.25, 'majority'), ''].join('\n');
  const f = parseSweepFile(text, 'r.jsonl');
  assert.equal(f.run, '/shared/runs/a');
  assert.equal(f.sweep.operator, 'core');
  assert.deepEqual(f.sweep.kappas, [0, 0.5]);
  assert.deepEqual(f.sweep.taus, [0.25, 1]);
  assert.equal(f.sweep.ms, 1234);
  assert.deepEqual(f.sweep.cells[2], { kappa: 0.5, tau: 0.25, groups: 10, flips: 5, gateSum: 7.5, withTruth: 8, correct: 6 });
});

test('a sweep over κ alone takes τ at its default', () => {
  const text = [header, JSON.stringify({ params: { kappa: 0.1 }, operator: 'ec', groups: 1, flips_vs_majority: 0, gate_sum: 1, with_truth: 0, correct: 0 })].join('\n');
  const f = parseSweepFile(text, 'r.jsonl');
  assert.deepEqual([f.sweep.operator, f.sweep.kappas, f.sweep.taus], ['ec', [0.1], [0.25]]);
});

test('not a result file, a broken line, a partial grid or another axis varied: an error naming the file', () => {
  assert.throws(() => parseSweepFile('{"params":{}}', 'x.jsonl'), /x\.jsonl:1: not a cluster sweep result/);
  assert.throws(() => parseSweepFile([header, row(0, 1), '{"params":'].join('\n'), 'x.jsonl'), /x\.jsonl:3: not a JSON object/);
  assert.throws(() => parseSweepFile([header, row(0, 1), row(0.5, 0.25)].join('\n'), 'x.jsonl'), /not a κ × τ grid/);
  assert.throws(() => parseSweepFile([header, row(0, 1, 'core', { alpha: 0.1 }), row(0, 1, 'core', { alpha: 0.2 })].join('\n'), 'x.jsonl'), /varies alpha/);
  assert.throws(() => parseSweepFile([header, row(0, 1, 'majority')].join('\n'), 'x.jsonl'), /no CoRE, EC or CISC/);
  assert.throws(() => parseSweepFile([header, JSON.stringify({ params: { kappa: 0 }, operator: 'core', groups: -1 })].join('\n'), 'x.jsonl'), /x\.jsonl:2: expected params/);
});
