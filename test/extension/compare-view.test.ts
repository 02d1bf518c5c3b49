// The run view's model (src/extension/workers/run-view-builder.ts) and its message checks
// (src/protocol/compare-messages.ts): one run, two runs, the side-by-side pair, hostile messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunContext, type Group } from '../../src/engine';
import { readRun } from '../../src/logs/log-layer';
import { healthOf } from '../../src/cli/health';
import { pairSide } from '../../src/extension/compare/run-view-model';
import { runViewModel, sideOf } from '../../src/extension/workers/run-view-builder';
import { parseCompareMessage } from '../../src/protocol/compare-messages';
import { buildView, score, storeGroup, summarize } from '../../src/extension/model/scoring';
import { defaultParams } from '../../src/extension/slider-params';
import { join } from 'node:path';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { WhatIfShard } from '../../src/extension/workers/whatif-shard';
import type { GroupHealth } from '../../src/engine';

async function groups(path: string): Promise<Group[]> {
  const out: Group[] = [];
  for await (const g of readRun(path, () => {})) out.push(g);
  return out;
}

async function side(path: string, op: 'majority' | 'core') {
  const ctx = createRunContext();
  const hs = (await groups(path)).map((g) => healthOf(g, { params: {}, configuredOperator: op }, ctx));
  return sideOf(path, op, hs, () => {});
}

test('run view model: two fixture runs carry the comparison `compare` prints', async () => {
  const m = runViewModel([await side('test/fixtures/compare/run-a', 'majority'), await side('test/fixtures/compare/run-b', 'majority')], ['a', 'b']);
  assert.deepEqual(m.steps, [1, 2, 3]);
  assert.deepEqual(m.runs.map((r) => r.labelAccuracy.value), [0.6, 0.75]);
  assert.equal(m.shared!.part, 2);
  assert.equal(m.disagreementsTotal, 2);
  assert.deepEqual(m.disagreements.map((d) => [d.questionId, d.agrees]), [['q1', 'b'], ['q2', 'a']]);
  assert.equal(m.signal.length, 2);
  assert.deepEqual(m.signal[0]!.groups.majority, [1, 0.5, 1]);
});

test('run view model: one run (a log file opened as a run) has no comparison', async () => {
  const m = runViewModel([await side('test/fixtures/compare/run-a', 'core')], ['a']);
  assert.equal(m.runs.length, 1);
  assert.equal(m.shared, null);
  assert.deepEqual(m.disagreements, []);
  assert.equal(m.runs[0].operator, 'core');
  assert.deepEqual(m.runs[0].labelAccuracy, { correct: 4, over: 5, value: 0.8 });
});

async function records(path: string, op: 'majority' | 'core'): Promise<GroupHealth[]> {
  const ctx = createRunContext();
  return (await groups(path)).map((g) => healthOf(g, { params: {}, configuredOperator: op }, ctx));
}

test('run view model on a worker thread: the same model as built here, records sent in parts', async () => {
  const a = await records('test/fixtures/compare/run-a', 'majority');
  const b0 = await records('test/fixtures/compare/run-b', 'core');
  // past one part (500 records): the same questions again under new ids
  const b = [...b0, ...Array.from({ length: 130 }, (_, i) => b0.map((h) => ({ ...h, questionId: `${h.questionId}-${i}` }))).flat()];
  assert.ok(b.length > 500);
  const engine = new WhatIfEngine({ workers: 1, script: join(import.meta.dirname, 'whatif-worker.mjs') });
  try {
    const local: string[] = [];
    const expected = runViewModel([sideOf('a', 'majority', a, (m) => local.push(m)), sideOf('b', 'core', b, (m) => local.push(m))], ['ra', 'rb']);
    const got = await engine.runView(
      [
        { name: 'a', operator: 'majority', records: a },
        { name: 'b', operator: 'core', records: b },
      ],
      ['ra', 'rb'],
    );
    assert.deepEqual(got.model, expected);
    assert.deepEqual(got.warnings, local);
    assert.equal(got.model.runs[1].operator, 'core');
    assert.ok(got.model.shared!.questions > 0 && got.model.disagreementsTotal > 0);
    // one run, and a run with no records
    const one = await engine.runView([{ name: 'a', operator: 'majority', records: a }], ['ra']);
    assert.deepEqual(one.model, runViewModel([sideOf('a', 'majority', a, () => {})], ['ra']));
    const none = await engine.runView([{ name: 'e', operator: 'core', records: [] }], ['re']);
    assert.deepEqual(none.model, runViewModel([sideOf('e', 'core', [], () => {})], ['re']));
  } finally {
    engine.dispose();
  }
});

test('pairSide: the operator\u2019s label class marked, the truth class marked', async () => {
  const [g] = await groups('test/fixtures/compare/run-a');
  const stored = storeGroup(g, 'run-a', 'run-a');
  const vote = pairSide('run-a', 'majority', buildView(stored, defaultParams(), 'majority'));
  assert.equal(vote.label, '3');
  assert.deepEqual(vote.classes.map((c) => [c.answer, c.size, c.isLabel, c.matchesGroundTruth]), [['3', 2, true, false], ['5', 2, false, true]]);
  const core = pairSide('run-a', 'core', buildView(stored, defaultParams(), 'core'));
  assert.equal(core.label, '5');
  assert.deepEqual(core.classes.map((c) => c.isLabel), [false, true]);
  assert.equal(core.groundTruth, '5');
  // The gate is the tree's and the consensus panel's (CoRE's w_q) on either side, never the vote's own 1.
  const summary = summarize(stored, score(stored, defaultParams(), 'majority'));
  assert.notEqual(summary.gate, 1);
  assert.equal(vote.gate, summary.gate);
  assert.equal(core.gate, summary.gate);
});

test('parseCompareMessage: only well-formed messages pass', () => {
  assert.deepEqual(parseCompareMessage({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(parseCompareMessage({ type: 'openPair', index: 3 }), { type: 'openPair', index: 3 });
  assert.equal(parseCompareMessage({ type: 'openPair', index: -1 }), null);
  assert.equal(parseCompareMessage({ type: 'openPair', index: 1.5 }), null);
  assert.deepEqual(parseCompareMessage({ type: 'openQuestion', side: 1, step: 2, questionId: 'q' }), { type: 'openQuestion', side: 1, step: 2, questionId: 'q' });
  assert.equal(parseCompareMessage({ type: 'openQuestion', side: 2, step: 2, questionId: 'q' }), null);
  assert.equal(parseCompareMessage({ type: 'openDashboard', side: '0' }), null);
  assert.equal(parseCompareMessage({ type: 'eval', code: 'x' }), null);
  assert.equal(parseCompareMessage('ready'), null);
});

test('a label equal to any accepted ground-truth form is correct: the panel, the pair, the what-if shard', async () => {
  // verl `gts` ["3", "4"] (the reader keeps "3" as the display form and both as accepted forms);
  // every roll-out answers 4.
  const g: Group = {
    step: 1,
    questionId: 'legs',
    groundTruth: '3',
    groundTruthForms: ['3', '4'],
    rollouts: [0, 1, 2, 3].map((i) => ({ response: `attempt ${i}: so \\boxed{4}`, meanLogprob: -0.2 - 0.1 * i, reward: 1 })),
  };
  const v = buildView(storeGroup(g, 'r', 'r'), defaultParams(), 'majority');
  const vote = v.operators.find((o) => o.operator === 'majority')!;
  assert.equal(vote.label, '4');
  assert.equal(vote.correct, true);
  assert.deepEqual(v.classes.map((c) => c.matchesGroundTruth), [true]);
  assert.equal(pairSide('r', 'majority', v).classes[0].matchesGroundTruth, true);
  // Without the list, "3" alone: not correct (the test fails if the forms were dropped).
  const { groundTruthForms: _f, ...single } = g;
  assert.equal(buildView(storeGroup(single, 'r', 'r'), defaultParams(), 'majority').operators.find((o) => o.operator === 'majority')!.correct, false);
  // The shard's re-score counts it correct before and after.
  const shard = new WhatIfShard();
  const setting = { operator: 'majority' as const, params: defaultParams() };
  const r = await shard.handle({ kind: 'rescore', job: 1, items: [{ key: 'k', version: 1, step: 1, questionId: 'legs', group: g }], before: setting, after: { operator: 'core', params: defaultParams() } });
  assert.equal(r.kind, 'rescore');
  if (r.kind !== 'rescore') return;
  assert.equal(r.diffs[0].correctBefore, true);
  assert.equal(r.diffs[0].correctAfter, true);
});
