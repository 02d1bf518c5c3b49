import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { collect, jsonl, tempDir, write } from './helpers.js';
import { readRolloutText } from '../../src/logs/log-layer.js';

/** Deterministic shuffle (LCG) so the test is reproducible. */
function shuffle<T>(xs: T[], seed = 7): T[] {
  const a = xs.slice();
  let s = seed;
  for (let i = a.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function verlLines(step: number, prompts: string[], n: number, opts: { uid?: boolean; gts?: boolean } = {}): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  prompts.forEach((p, pi) => {
    for (let i = 0; i < n; i++) {
      const line: Record<string, unknown> = { input: p, output: `step ${step} ${p} sample ${i} \\boxed{${i % 2}}` };
      if (opts.gts !== false) line.gts = String(pi);
      line.score = i % 2 === 0 ? 1.0 : 0.0;
      line.step = step;
      line.acc = i % 2 === 0; // reward extra-info keys
      line.pred = String(i % 2);
      if (opts.uid) line.uid = `uuid-${step}-${pi}_${i}`;
      out.push(line);
    }
  });
  return out;
}

test('verl dump with shuffled lines and extra reward keys: groups by identical input within a step', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'rollout/1.jsonl', jsonl(shuffle(verlLines(1, ['What is 1+1?', 'What is 2+2?', 'Solve x'], 4))));
    write(dir, 'rollout/2.jsonl', jsonl(shuffle(verlLines(2, ['What is 1+1?', 'Solve x'], 4))));
    write(dir, 'rollout/10.jsonl', jsonl(shuffle(verlLines(10, ['What is 2+2?'], 4))));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length]), [[1, 4], [1, 4], [1, 4], [2, 4], [2, 4], [10, 4]]);
    for (const g of groups) {
      assert.equal(g.run, 'rollout');
      const prompt = g.prompt!;
      for (const r of g.rollouts) {
        assert.ok(r.response.startsWith(`step ${g.step} ${prompt} sample`));
        assert.equal(r.meanLogprob, null);
        assert.equal(r.reward, /sample \d*[02468] /.test(r.response) ? 1 : 0);
        assert.deepEqual(Object.keys((r as { extra?: object }).extra ?? {}), ['acc', 'pred']);
      }
    }
    // the same question keeps its id across steps
    const ids = (p: string) => new Set(groups.filter((g) => g.prompt === p).map((g) => g.questionId));
    assert.equal(ids('What is 1+1?').size, 1);
    assert.notDeepEqual([...ids('What is 1+1?')], [...ids('Solve x')]);
    assert.equal(groups.find((g) => g.prompt === 'Solve x')?.groundTruth, '2');
  } finally {
    cleanup();
  }
});

test('verl dump with uid: groups by uid prefix (same prompt twice in a step stays two groups)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lines = verlLines(5, ['A', 'B', 'A'], 3, { uid: true });
    write(dir, '5.jsonl', jsonl(shuffle(lines, 3)));
    const { groups, notices } = await collect(join(dir, '5.jsonl'));
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    assert.equal(groups.length, 3);
    const a = groups.filter((g) => g.prompt === 'A');
    assert.equal(a.length, 2);
    assert.notEqual(a[0].questionId, a[1].questionId);
    assert.ok(a[1].questionId.endsWith('#2') || a[0].questionId.endsWith('#2'));
    for (const g of groups) assert.equal(g.rollouts.length, 3);
  } finally {
    cleanup();
  }
});

test('old verl dump without gts or step keys (step from file name); odd group size warned', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lines = verlLines(0, ['P', 'Q', 'R'], 4, { gts: false }).map(({ step: _s, ...rest }) => rest);
    lines.pop(); // R has 3 roll-outs
    write(dir, '42.jsonl', jsonl(lines));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => [g.step, g.rollouts.length, g.groundTruth ?? null]), [[42, 4, null], [42, 4, null], [42, 3, null]]);
    const warnings = notices.filter((n) => n.level !== 'info');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].message, /has 3 roll-outs; the run's usual group size is 4/);
    assert.equal(warnings[0].file, join(dir, '42.jsonl'));
    assert.ok(notices.some((n) => n.level === 'info' && /no log-probs/.test(n.message)));
  } finally {
    cleanup();
  }
});

test('TTRL on verl: gts / acc / extracted_gt are not ground truth', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lines = verlLines(3, ['P'], 2).map((l) => ({ ...l, extracted_gt: '0' }));
    write(dir, '3.jsonl', jsonl(lines));
    const { groups, notices } = await collect(dir);
    assert.equal(groups.length, 1);
    assert.equal(groups[0].groundTruth ?? null, null);
    const ttrl = notices.filter((n) => /TTRL/.test(n.message));
    assert.equal(ttrl.length, 1);
    assert.equal(ttrl[0].level, 'info');
  } finally {
    cleanup();
  }
});

test('TRL completions parquet: runs of identical prompts; rewards summed; texts read back by row', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const prompts = ['p1', 'p1', 'p1', 'p2', 'p2', 'p2', 'p1', 'p1', 'p1'];
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'step', data: prompts.map(() => '7'), type: 'STRING' },
        { name: 'prompt', data: prompts, type: 'STRING' },
        { name: 'completion', data: prompts.map((p, i) => `${p} completion ${i} \\boxed{${i % 2}}`), type: 'STRING' },
        { name: 'accuracy_reward', data: prompts.map((_, i) => (i % 2 ? 1 : 0)), type: 'DOUBLE' },
        { name: 'format_reward', data: prompts.map((_, i) => (i === 4 ? NaN : 0.5)), type: 'DOUBLE' },
        { name: 'advantage', data: prompts.map((_, i) => i / 10), type: 'DOUBLE' },
      ],
    });
    const file = join(dir, 'completions', 'completions_00007.parquet');
    write(dir, 'completions/.keep', '');
    writeFileSync(file, Buffer.from(buf));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    assert.deepEqual(groups.map((g) => [g.step, g.prompt, g.rollouts.length]), [[7, 'p1', 3], [7, 'p2', 3], [7, 'p1', 3]]);
    assert.notEqual(groups[0].questionId, groups[2].questionId);
    assert.equal(groups[0].run, 'completions');
    const r = groups[1].rollouts;
    // row 3: 1 + 0.5; row 4: 0 + NaN (skipped, as TRL's nansum); row 5: 1 + 0.5
    assert.deepEqual(r.map((x) => x.reward), [1.5, 0, 1.5]);
    assert.deepEqual((r[0] as { extra?: object }).extra, { accuracy_reward: 1, format_reward: 0.5, advantage: 0.3 });
    assert.equal(r[2].response, 'p2 completion 5 \\boxed{1}');
    assert.equal(await readRolloutText(r[2].source!), 'p2 completion 5 \\boxed{1}');
  } finally {
    cleanup();
  }
});

test('RunIndex (static) gives the same groups as readRun for verl and TRL runs', async () => {
  const { RunIndex } = await import('../../src/logs/log-layer.js');
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'verl/1.jsonl', jsonl(shuffle(verlLines(1, ['a', 'b'], 3, { uid: true }))));
    write(dir, 'verl/2.jsonl', jsonl(shuffle(verlLines(2, ['a', 'b'], 3))));
    const prompts = ['p', 'p', 'q', 'q'];
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'step', data: prompts.map(() => '3'), type: 'STRING' },
        { name: 'prompt', data: prompts, type: 'STRING' },
        { name: 'completion', data: prompts.map((p, i) => `${p} ${i} \\boxed{${i}}`), type: 'STRING' },
        { name: 'r', data: prompts.map((_, i) => i), type: 'DOUBLE' },
      ],
    });
    write(dir, 'trl/completions/completions_00003.parquet', Buffer.from(buf));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
    const idx = await RunIndex.open(dir, { follow: false, onNotice: (n) => n.level !== 'info' && assert.fail(n.message) });
    const es = idx.groups();
    assert.equal(es.length, groups.length);
    for (let i = 0; i < es.length; i++) {
      const g = await idx.loadGroup(es[i].key);
      assert.equal(g.questionId, groups[i].questionId);
      assert.equal(g.step, groups[i].step);
      assert.equal(g.run, groups[i].run);
      assert.deepEqual(g.rollouts.map((r) => [r.response, r.reward]), groups[i].rollouts.map((r) => [r.response, r.reward]));
    }
    idx.close();
  } finally {
    cleanup();
  }
});

test('followed run: a TRL parquet file that appears half-written is read once complete; verl sizes warned', async () => {
  const { RunIndex } = await import('../../src/logs/log-layer.js');
  const { dir, cleanup } = tempDir();
  const notices: string[] = [];
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 300, onNotice: (n) => notices.push(`${n.level}: ${n.message}`) });
  try {
    const prompts = ['p', 'p', 'q', 'q'];
    const buf = Buffer.from(
      parquetWriteBuffer({
        columnData: [
          { name: 'step', data: prompts.map(() => '1'), type: 'STRING' },
          { name: 'prompt', data: prompts, type: 'STRING' },
          { name: 'completion', data: prompts.map((p, i) => `${p} ${i}`), type: 'STRING' },
          { name: 'r', data: prompts.map((_, i) => i), type: 'DOUBLE' },
        ],
      }),
    );
    const f = join(dir, 'completions_00001.parquet');
    writeFileSync(f, buf.subarray(0, Math.floor(buf.length / 2)));
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(idx.size, 0);
    writeFileSync(f, buf);
    const t0 = Date.now();
    while (idx.size < 2 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(idx.groups().map((g) => [idx.group(g.key)?.prompt, g.n, g.complete]), [['p', 2, true], ['q', 2, true]]);
    // verl: three groups of 4 and one of 3 → a warning once the odd group completes
    const lines = verlLines(7, ['A', 'B', 'C', 'D'], 4);
    lines.pop();
    write(dir, 'verl/7.jsonl', jsonl(lines));
    while (idx.groups().filter((g) => g.complete).length < 6 && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    assert.equal(idx.groups().filter((g) => g.complete).length, 6);
    assert.ok(notices.some((n) => /has 3 roll-outs; the run's usual group size is 4/.test(n)), notices.join('\n'));
    assert.ok(!notices.some((n) => n.startsWith('error')), notices.join('\n'));
  } finally {
    idx.close();
    cleanup();
  }
});

test('committed fixtures (scripts/make-trl-fixture.mjs): TRL parquet and verl dumps load cleanly', async () => {
  const trlRun = await collect(join('test', 'fixtures', 'logs', 'trl'));
  const verlRun = await collect(join('test', 'fixtures', 'logs', 'verl'));
  const notices = [...trlRun.notices, ...verlRun.notices];
  const groups = [...trlRun.groups.map((g) => ({ ...g, run: `trl/${g.run}` })), ...verlRun.groups.map((g) => ({ ...g, run: `verl/${g.run}` }))];
  assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
  assert.equal(groups.length, 12);
  assert.ok(groups.every((g) => g.rollouts.length === 8));
  assert.deepEqual([...new Set(groups.map((g) => g.run))].sort(), ['trl/completions', 'verl/rollout']);
  const verl = groups.filter((g) => g.run === 'verl/rollout');
  assert.ok(verl.every((g) => g.groundTruth !== undefined && g.groundTruth !== null));
  const trl = groups.filter((g) => g.run === 'trl/completions');
  assert.ok(trl.every((g) => g.rollouts.every((r) => typeof r.reward === 'number')));
});
