// One run, two logs (src/logs/join.ts): TRL's completions table and the consensus_lens.trl log of
// the same run, both under its output_dir, read as one run — each table group joined into the log's
// group of the same step and prompt, with the advantage TRL logged on the log's roll-outs — by the
// one-shot reader (score, report, compare), the static index and the followed index (the explorer),
// in either order of arrival; groups that do not match stay two, with a warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { collect, tempDir, write } from './helpers.js';
import { RunIndex } from '../../src/logs/log-layer.js';
import { readTrlFile } from '../../src/logs/trl.js';
import { tableRoot } from '../../src/logs/join.js';

const FX = join(import.meta.dirname, '..', 'fixtures', 'logs', 'writers', 'trl-1x-pandas2');
const TABLES = ['completions/train/completions_00001.parquet', 'completions/train/completions_00002.parquet'];

/** The log consensus_lens.trl writes of the table's batches: roll-out records, framework "trl". */
async function logOf(out: string, opts: { drop?: string } = {}): Promise<{ lines: string[][]; adv: Map<string, number[]> }> {
  const lines: string[][] = [];
  const adv = new Map<string, number[]>();
  for (const t of TABLES) {
    const r = await readTrlFile(join(out, t), undefined);
    const step: string[] = [];
    for (const g of r.records) {
      if (g.kind !== 'group') continue;
      adv.set(`${g.step} ${g.questionId}`, g.rollouts.map((x) => x.extra!.advantage as number));
      const rs = opts.drop === `${g.step} ${g.questionId}` ? g.rollouts.slice(1) : g.rollouts;
      rs.forEach((ro, i) =>
        step.push(
          JSON.stringify({
            kind: 'rollout',
            step: g.step,
            question_id: g.questionId,
            prompt: g.prompt,
            framework: 'trl',
            sample_idx: i,
            response: ro.response,
            reward: ro.reward,
            mean_logprob: -0.01 * (i + 1),
            extra: { operator: 'majority', label: '1' },
          }),
        ),
      );
    }
    lines.push(step);
  }
  return { lines, adv };
}

function runFolder(): { out: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir('cl-join-');
  const out = join(dir, 'grpo-run');
  cpSync(FX, out, { recursive: true });
  return { out, cleanup };
}

test('tableRoot: the output_dir of TRL completions tables (TRL 1.x train/eval folders, 0.2x flat)', () => {
  assert.equal(tableRoot('/o/run/completions/train/completions_00001.parquet'), '/o/run');
  assert.equal(tableRoot('/o/run/completions/completions_00001.parquet'), '/o/run');
  assert.equal(tableRoot('/o/run/consensus/step_000001.rank0.jsonl'), undefined);
  assert.equal(tableRoot('/o/run/other.parquet'), undefined);
});

test('score reads TRL\u2019s table and the log under its output_dir as one run: one group per step and prompt, TRL\u2019s advantages on the log\u2019s roll-outs', async () => {
  const { out, cleanup } = runFolder();
  try {
    const only = await collect(out);
    const { lines, adv } = await logOf(out);
    lines.forEach((l, k) => write(out, `consensus/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
    const { groups, notices } = await collect(out);
    assert.equal(groups.length, only.groups.length);
    assert.equal(groups.length, adv.size);
    for (const g of groups) {
      assert.equal(g.run, undefined, 'the log\u2019s group (no completions/train/ prefix)');
      assert.deepEqual(
        g.rollouts.map((r) => r.advantage),
        adv.get(`${g.step} ${g.questionId}`),
      );
      // The log's own fields stay: its confidence and the operator it logged.
      assert.deepEqual(
        g.rollouts.map((r) => r.meanLogprob),
        g.rollouts.map((_, i) => -0.01 * (i + 1)),
      );
      assert.equal(g.loggedOperator, 'majority');
    }
    assert.equal(notices.filter((n) => /of the same run are one run: their groups are joined by step and prompt/.test(n.message)).length, 1);
    assert.ok(!notices.some((n) => n.level === 'warning' && /TRL's table/.test(n.message)));
  } finally {
    cleanup();
  }
});

test('the static and the followed index join them too, whichever arrives first', async () => {
  const { out, cleanup } = runFolder();
  const { lines, adv } = await logOf(out);
  try {
    lines.forEach((l, k) => write(out, `consensus/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
    const idx = await RunIndex.open(out, { follow: false, onNotice: () => undefined });
    try {
      const es = idx.groups();
      assert.equal(es.length, adv.size);
      const g = await idx.loadGroup(es[3].key);
      assert.deepEqual(
        g.rollouts.map((r) => r.advantage),
        adv.get(`${g.step} ${g.questionId}`),
      );
    } finally {
      idx.close();
    }
    // Followed: the table is there first; the log's steps arrive later and take the table's groups in.
    rmSync(join(out, 'consensus'), { recursive: true, force: true });
    const removed = new Set<string>();
    const live = await RunIndex.open(out, { follow: true, poll: true, pollMs: 50, idleMs: 300, onNotice: () => undefined });
    live.onDidChange((e) => e.removed.forEach((k) => removed.add(k)));
    try {
      assert.equal(live.groups().length, adv.size);
      assert.ok(live.groups().every((e) => e.run === 'completions/train'));
      lines.forEach((l, k) => write(out, `consensus/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
      const t0 = Date.now();
      while (live.groups().some((e) => e.run !== undefined) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
      await live.settled();
      const es = live.groups();
      assert.equal(es.length, adv.size);
      assert.ok(es.every((e) => e.run === undefined && e.complete));
      assert.equal(removed.size, adv.size);
      const g = await live.loadGroup(es[0].key);
      assert.deepEqual(
        g.rollouts.map((r) => r.advantage),
        adv.get(`${g.step} ${g.questionId}`),
      );
    } finally {
      live.close();
    }
  } finally {
    cleanup();
  }
});

test('groups that do not match stay two, with a warning naming them: another roll-out count', async () => {
  const { out, cleanup } = runFolder();
  try {
    const only = await collect(out);
    const first = only.groups[0];
    const { lines } = await logOf(out, { drop: `${first.step} ${first.questionId}` });
    lines.forEach((l, k) => write(out, `consensus/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
    const { groups, notices } = await collect(out);
    assert.equal(groups.length, only.groups.length + 1);
    const warned = notices.filter((n) => n.level === 'warning' && /TRL's table and the log/.test(n.message));
    assert.equal(warned.length, 1);
    assert.match(warned[0].message, new RegExp(`step ${first.step}, question ${first.questionId}, but the table has ${first.rollouts.length} roll-outs and the log ${first.rollouts.length - 1}: shown as two groups`));
  } finally {
    cleanup();
  }
});

test('the log\u2019s own reward column in the table (consensus_<operator>) must agree row by row, else two groups', async () => {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const { dir, cleanup } = tempDir('cl-join-');
  try {
    const table = (rewards: number[]) =>
      Buffer.from(
        parquetWriteBuffer({
          columnData: [
            { name: 'step', data: rewards.map(() => 1n), type: 'INT64' },
            { name: 'prompt', data: rewards.map(() => 'What is 3+4?'), type: 'STRING' },
            { name: 'completion', data: rewards.map((_, i) => `\\boxed{${7 + (i % 2)}}`), type: 'STRING' },
            { name: 'consensus_majority', data: rewards, type: 'DOUBLE' },
            { name: 'advantage', data: rewards.map((r) => r - 0.5), type: 'DOUBLE' },
          ],
        }),
      );
    const log = (rewards: number[]) =>
      rewards.map((r, i) => JSON.stringify({ kind: 'rollout', step: 1, question_id: 'p-x', prompt: 'What is 3+4?', framework: 'trl', sample_idx: i, response: `\\boxed{${7 + (i % 2)}}`, reward: r, extra: { operator: 'majority' } })).join('\n') + '\n';
    write(dir, 'a/completions/completions_00001.parquet', table([1, 0, 1, 0]));
    write(dir, 'a/consensus/step_000001.rank0.jsonl', log([1, 0, 1, 0]));
    const ok = await collect(join(dir, 'a'));
    assert.equal(ok.groups.length, 1);
    assert.deepEqual(
      ok.groups[0].rollouts.map((r) => r.advantage),
      [0.5, -0.5, 0.5, -0.5],
    );
    write(dir, 'b/completions/completions_00001.parquet', table([1, 0, 1, 0]));
    write(dir, 'b/consensus/step_000001.rank0.jsonl', log([0, 1, 0, 1]));
    const bad = await collect(join(dir, 'b'));
    assert.equal(bad.groups.length, 2);
    assert.equal(bad.groups.find((g) => g.run === undefined)!.rollouts[0].advantage, undefined);
    assert.ok(bad.notices.some((n) => /roll-out 0 has reward 1 in the table's consensus_majority and 0 in the log: shown as two groups/.test(n.message)));
  } finally {
    cleanup();
  }
});

test('the log beside the output_dir in one run folder joins too; a folder of several runs\u2019 tables joins nothing it would have to guess', async () => {
  const { dir, cleanup } = tempDir('cl-join-');
  try {
    cpSync(FX, join(dir, 'run/trl'), { recursive: true });
    const { lines, adv } = await logOf(join(dir, 'run/trl'));
    lines.forEach((l, k) => write(dir, `run/consensus/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
    const one = await collect(join(dir, 'run'));
    assert.equal(one.groups.length, adv.size);
    assert.ok(one.groups.every((g) => g.run === undefined && g.rollouts.every((r) => typeof r.advantage === 'number')));
    // runs/a and runs/b are two TRL runs of one dataset; runs/a-log could be either's.
    cpSync(FX, join(dir, 'runs/a'), { recursive: true });
    cpSync(FX, join(dir, 'runs/b'), { recursive: true });
    lines.forEach((l, k) => write(dir, `runs/a-log/step_00000${k + 1}.rank0.jsonl`, l.join('\n') + '\n'));
    const many = await collect(join(dir, 'runs'));
    assert.equal(many.groups.length, 3 * adv.size);
  } finally {
    cleanup();
  }
});
