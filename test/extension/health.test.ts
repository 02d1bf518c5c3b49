// Run health in the extension host: the store's summaries carry the health records, the explorer's
// degenerate filter, the panel's flags and premise, and the status bar's alarms (one analysis with
// the CLI: the same records give the same alarms).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunContext, analyseRun, isDegenerate } from '../../src/engine';
import { buildView, score, storeGroup, summarize, type QuestionSummary } from '../../src/extension/model/scoring';
import { filterQuestions } from '../../src/extension/explorer/filters';
import { questionDescription } from '../../src/extension/format';
import { alarmStatus, healthRecords, RunHealthCache, runPremise } from '../../src/extension/status/health-status';
import { healthOf } from '../../src/cli/health';
import { makeRun } from '../engine/health-runs';

const SHAPE = { steps: 16, questions: 4, n: 8, accuracy: 0.5, seed: 5 };
const groups = makeRun(SHAPE, { formatCollapseAt: 10, degeneratePluralities: 0.25 });

function summaries(): Map<string, QuestionSummary> {
  const m = new Map<string, QuestionSummary>();
  const ctx = createRunContext();
  for (const g of groups) {
    const sg = storeGroup(g, 'run', 'run');
    m.set(`${g.step}|${g.questionId}`, summarize(sg, score(sg, {}, 'majority', ctx, ['majority', 'core'])));
  }
  return m;
}

test('the store\'s summaries give the alarms the CLI gives; the status bar names them', () => {
  const s = summaries();
  const ctx = createRunContext();
  const cli = analyseRun(groups.map((g) => healthOf(g, { params: {} }, ctx)));
  const host = analyseRun(healthRecords(s.values()));
  assert.deepEqual(host.alarms.map((a) => a.message), cli.alarms.map((a) => a.message));
  assert.ok(host.alarms.some((a) => a.series === 'unformatted_share' && a.step === 10));
  assert.deepEqual(host.rewardBugs.map((b) => b.kind), cli.rewardBugs.map((b) => b.kind));
  const st = alarmStatus(host);
  assert.match(st.text, /^\$\(warning\) \d+ alarms?, 1 reward bug$/);
  assert.match(st.tooltip, /alarm: unformatted share 0\.00 → \d\.\d\d from step ≈ 10/);
  assert.deepEqual(alarmStatus(analyseRun([])), { text: '', tooltip: '' });
});

test('the status bar\'s analysis is cached while the run grows, refreshed in the background after the interval, and seeded by a saved one', async () => {
  const s = summaries();
  let refreshed = 0;
  const cache = new RunHealthCache(2000, () => refreshed++);
  const part = [...s.values()].slice(0, 10);
  const records = (xs: QuestionSummary[]) => async () => healthRecords(xs);
  const none = cache.get('run', 10, records(part), 0);
  assert.equal(none.health, null); // the first analysis runs in the background
  await cache.settled();
  assert.equal(refreshed, 1);
  const first = cache.get('run', 10, records(part), 10);
  assert.equal(first.health!.groups, 10);
  const grown = cache.get('run', s.size, records([...s.values()]), 500);
  assert.equal(grown.health!.groups, 10);
  assert.equal(grown.stale, true);
  await cache.settled();
  assert.equal(refreshed, 1, 'not before the interval');
  const due = cache.get('run', s.size, records([...s.values()]), 2600);
  assert.equal(due.health!.groups, 10);
  await cache.settled();
  const later = cache.get('run', s.size, records([...s.values()]), 2700);
  assert.equal(later.health!.groups, s.size);
  assert.equal(later.stale, false);
  // a saved analysis for this many questions is used as it is; a record reader that fails leaves the last one
  const seeded = new RunHealthCache(2000);
  const saved = analyseRun(healthRecords(part));
  const boom = async (): Promise<never> => {
    throw new Error('no records');
  };
  assert.equal(seeded.get('r', 10, boom, 0, { size: 10, health: saved }).health, saved);
  assert.equal(seeded.get('r', 11, boom, 5000, { size: 10, health: saved }).health, saved);
  await seeded.settled();
  assert.equal(seeded.get('r', 11, boom, 5001).stale, true);
});

test('explorer: the degenerate filter keeps questions with a degenerate plurality or degenerate roll-outs; the description says so', () => {
  const s = summaries();
  const keys = [...s.keys()];
  const kept = filterQuestions(keys, (k) => s.get(k), 'degenerate', 'id');
  const expected = keys.filter((k) => s.get(k)!.health!.degeneratePlurality || s.get(k)!.health!.flags.some(isDegenerate));
  assert.ok(expected.length > 0);
  assert.deepEqual(kept, expected);
  const plural = expected.find((k) => s.get(k)!.health!.degeneratePlurality)!;
  assert.match(questionDescription(s.get(plural)), /degenerate plurality$/);
});

test('panel: flags per roll-out, the degenerate plurality and the confidence AUROC', () => {
  const g = groups.find((x) => x.rollouts.filter((r) => r.response.endsWith('\\boxed{}')).length * 2 >= x.rollouts.length)!;
  const v = buildView(storeGroup(g, 'run', 'run'), {}, 'majority');
  assert.equal(v.health!.degeneratePlurality, true);
  assert.ok(v.health!.rescuedBy.includes('core'));
  const empties = v.rollouts.filter((r) => r.answer === '');
  assert.ok(empties.length >= 4 && empties.every((r) => r.flags!.includes('empty') && r.flags!.includes('repetitive')));
  // The vote's (empty) class is the least confident: confidence points away from it.
  assert.ok(v.health!.auroc !== null && v.health!.auroc < 0.2);
  const p = runPremise(summaries().values());
  assert.ok(p.groups > 5 && p.auroc !== null);
});
