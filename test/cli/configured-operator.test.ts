// The operator a run's log records ("operator" in each group's extra, as the Python reward helpers
// write it) is the configured operator of the reward-mismatch check unless the user names another:
// score, report, health, the explorer's summaries and the dashboard agree.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { RunStore } from '../../src/extension/model/run-store';
import { storeSource } from '../../src/extension/model/run-source';
import { WhatIfEngine } from '../../src/extension/workers/whatif-engine';
import { dashboardModel } from '../../src/extension/dashboard/dashboard-model';
import { defaultParams } from '../../src/extension/slider-params';
import { rng, synthRollouts } from '../../scripts/synth';

const dir = mkdtempSync(join(tmpdir(), 'cl-configured-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args, '--jobs', '0'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// 24 groups rewarded with EC, as the verl recipe with reward_kwargs.operator=ec logs them: score
// the plain groups with EC, then write its rewards and the operator into the log.
const r = rng(7);
const plain = join(dir, 'plain.jsonl');
const groups = Array.from({ length: 24 }, (_, k) => ({
  kind: 'group',
  step: Math.floor(k / 8),
  question_id: `q${k % 8}`,
  rollouts: synthRollouts(r, [{ answer: String(k % 5), count: 7 }, { answer: String((k % 5) + 1), count: 5 }]).map((x) => ({ response: x.response, mean_logprob: x.mean_logprob })),
}));
writeFileSync(plain, groups.map((g) => JSON.stringify(g)).join('\n') + '\n');
const ec = cli(['score', plain, '--operators', 'ec']);
assert.equal(ec.code, 0, ec.err);
const ecRewards: number[][] = ec.out.trim().split('\n').map((l) => JSON.parse(l).results.ec.rewards);
const run = join(dir, 'ec-run');
require('node:fs').mkdirSync(run);
writeFileSync(
  join(run, 'step_000000.jsonl'),
  groups.map((g, k) => JSON.stringify({ ...g, rollouts: g.rollouts.map((ro, i) => ({ ...ro, reward: ecRewards[k][i] })), extra: { operator: 'ec' } })).join('\n') + '\n',
);

test('a run logged with "operator": "ec" is checked against ec: no mismatch in score, report, health', () => {
  assert.ok(ecRewards.some((rw) => rw.some((x) => x !== 0 && x !== 1)), 'EC rewards are graded, so a check against majority would flag them');
  const s = cli(['score', run, '--operators', 'majority']);
  assert.equal(s.code, 0, s.err);
  const lines = s.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 24);
  for (const l of lines) {
    assert.equal(l.reward_mismatch.operator, 'ec');
    assert.deepEqual(l.reward_mismatch.indices, []);
  }
  const rep = cli(['report', run]);
  assert.equal(rep.code, 0, rep.err);
  assert.match(rep.out, /reward mismatch: none \(24 groups checked against ec\)/);
  const h = cli(['health', run]);
  assert.equal(h.code, 0, h.err);
  assert.match(h.out, /Reward bugs: none found/);
  assert.match(h.out, /Reward mismatches: none \(24 groups checked against ec\)/);
  const hj = JSON.parse(cli(['health', run, '--json']).out);
  assert.deepEqual(hj.reward_mismatch, { checked: 24, groups: 0, operators: ['ec'] });
  const rj = JSON.parse(cli(['report', run, '--json']).out);
  assert.deepEqual(rj.reward_mismatch, { checked: 24, groups: 0, operators: ['ec'] });
});

test('--configured-operator overrides what the log says, in every command alike', () => {
  const s = cli(['score', run, '--operators', 'majority', '--configured-operator', 'majority']);
  const lines = s.out.trim().split('\n').map((l) => JSON.parse(l));
  const flagged = lines.filter((l) => l.reward_mismatch.indices.length).length;
  assert.ok(flagged > 0);
  assert.match(cli(['report', run, '--configured-operator', 'majority']).out, new RegExp(`reward mismatch: in ${flagged} groups of 24 .*\\(majority\\)`));
  assert.match(cli(['health', run, '--configured-operator', 'majority']).out, new RegExp(`Reward mismatches: in ${flagged} groups of 24 .*\\(majority\\)`));
});

test('the demo run (trained with majority, nothing logged): report and health name the same 6 mismatches', () => {
  const rep = cli(['report', 'examples/demo-run']);
  assert.match(rep.out, /reward mismatch: in 6 groups of 36 the logged reward differs from the configured operator's \(majority\)/);
  const h = cli(['health', 'examples/demo-run']);
  assert.match(h.out, /Reward mismatches: in 6 groups of 36 .*\(majority\)/);
  assert.doesNotMatch(h.out, /Reward bugs: none found/);
});

test('the explorer summaries and the dashboard use the logged operator unless the setting names one', async () => {
  for (const [setting, expectMismatch] of [[undefined, false], ['majority', true]] as const) {
    const store = new RunStore({ configuredOperator: () => setting, params: defaultParams, follow: false });
    try {
      const entry = store.add(run, 'opened');
      await store.idle();
      await store.summariesDone();
      let mismatches = 0;
      for (let q = 0; q < 8; q++) {
        const s = store.summary({ runId: entry.id, step: 0, questionId: `q${q}` })!;
        assert.ok(s, `q${q}`);
        assert.equal(s.checkedAgainst, setting ?? 'ec');
        mismatches += s.mismatches;
      }
      assert.equal(mismatches > 0, expectMismatch, `setting ${setting}`);
      const engine = new WhatIfEngine({ workers: 0 });
      try {
        const model = dashboardModel(await engine.dashboard(storeSource(store, entry), defaultParams(), setting));
        assert.equal(model.steps.reduce((a, s) => a + s.mismatches, 0) > 0, expectMismatch, `dashboard, setting ${setting}`);
      } finally {
        engine.dispose();
      }
    } finally {
      store.dispose();
    }
  }
});
