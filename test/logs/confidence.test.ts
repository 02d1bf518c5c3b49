// Self-certainty and token entropy per roll-out (src/logs/confidence.ts) through every reader that
// can carry them: native (group and roll-out records), verl dump columns, TRL completions columns,
// NeMo RL lines; real values as logged, sampled-token log-probs only as the marked approximation;
// the run index (packed columns, roll-out lists) and its persisted form keep them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { collect, jsonl, tempDir, write } from './helpers.js';
import { RunIndex, rolloutsOf } from '../../src/logs/log-layer.js';
import { convertNative } from '../../src/logs/native.js';
import { cacheKey } from '../../src/logs/cache/cached-run.js';
import type { Rollout } from '../../src/engine';

const conf = (r: Rollout) => ({ sc: r.selfCertainty, en: r.entropy, te: r.tokenEntropies, ap: r.confidenceApproximate });

test('native: logged self-certainty and entropies are read as logged; token log-probs alone give the marked approximation', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(
      dir,
      'step_000001.jsonl',
      jsonl([
        {
          kind: 'group',
          step: 1,
          question_id: 'q',
          rollouts: [
            { response: 'a \\boxed{1}', self_certainty: 3.25, entropy: 0.5, token_entropies: [0.25, 0.75] },
            { response: 'b \\boxed{1}', token_logprobs: [-0.5, -1.5] },
            { response: 'c \\boxed{2}', entropy: 0.9, token_entropies: [0.9, null], confidence_approximate: true, token_logprobs: [-2, -3] },
            { response: 'd \\boxed{2}', self_certainty: 'high', mean_logprob: -1 },
          ],
        },
        { kind: 'rollout', step: 1, question_id: 'r', sample_idx: 0, response: 'x', self_certainty: 1.5 },
        { kind: 'rollout', step: 1, question_id: 'r', sample_idx: 1, response: 'y', token_logprobs: [-0.25] },
      ]),
    );
    const { groups, notices } = await collect(dir);
    assert.equal(groups.length, 2);
    const [g, r] = groups;
    assert.deepEqual(conf(g.rollouts[0]), { sc: 3.25, en: 0.5, te: [0.25, 0.75], ap: undefined });
    // Only the sampled tokens' log-probs: each token's surprisal, marked approximate; no self-certainty.
    assert.deepEqual(conf(g.rollouts[1]), { sc: undefined, en: 1, te: [0.5, 1.5], ap: true });
    // Logged values win over the log-probs; a per-token null stays a (refusable) NaN in its place.
    assert.deepEqual(conf(g.rollouts[2]), { sc: undefined, en: 0.9, te: [0.9, Number.NaN], ap: true });
    // A wrong type is dropped with a notice, never read as a number; a mean log-prob alone estimates nothing.
    assert.deepEqual(conf(g.rollouts[3]), { sc: undefined, en: undefined, te: undefined, ap: undefined });
    assert.ok(notices.some((n) => /self_certainty/.test(n.message)), JSON.stringify(notices));
    assert.deepEqual(r.rollouts.map(conf), [
      { sc: 1.5, en: undefined, te: undefined, ap: undefined },
      { sc: undefined, en: 0.25, te: [0.25], ap: true },
    ]);
    // The run index (packed group columns, roll-out lists) gives the same.
    const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
    try {
      for (const [i, e] of idx.groups().entries()) {
        const loaded = await idx.loadGroup(e.key);
        assert.deepEqual(loaded.rollouts.map(conf), groups[i].rollouts.map(conf));
      }
      const first = rolloutsOf(idx.group(idx.groups()[0].key)!);
      assert.deepEqual(first[0].confidences, { selfCertainty: 3.25, entropy: 0.5, tokenEntropies: [0.25, 0.75] });
      assert.equal(first[3].confidences, undefined);
    } finally {
      idx.close();
    }
  } finally {
    cleanup();
  }
});

test('native request to the reward worker: the fields reach the engine roll-out', () => {
  const c = convertNative({ kind: 'group', step: 2, question_id: 'q', rollouts: [{ response: 'a', self_certainty: 2, entropy: 0.1, token_entropies: [0.1] }] }, { file: '<request>', line: 1, offset: 0, length: 0 });
  assert.ok(c.ok && c.record.kind === 'group');
  assert.deepEqual(conf(c.record.rollouts[0]), { sc: 2, en: 0.1, te: [0.1], ap: undefined });
});

test('verl dump: reward_extra_info columns cl_entropy / cl_token_entropies (a plain entropy key stays an extra); rollout_log_probs alone approximate', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const line = (i: number, x: Record<string, unknown>) => ({ input: 'p', output: `o ${i} \\boxed{${i % 2}}`, gts: '1', score: 1, step: 4, uid: 'u', acc: true, ...x });
    write(
      dir,
      '4.jsonl',
      jsonl([
        line(0, { cl_entropy: 0.5, cl_token_entropies: [0.25, 0.75], cl_gate: 1 }),
        line(1, { cl_self_certainty: 2.5, cl_entropy: 0.125, entropy: 7 }),
        line(2, { rollout_log_probs: [-1, -3] }),
        line(3, {}),
      ]),
    );
    const { groups } = await collect(dir);
    assert.equal(groups.length, 1);
    const rs = groups[0].rollouts;
    assert.deepEqual(rs.map(conf), [
      { sc: undefined, en: 0.5, te: [0.25, 0.75], ap: undefined },
      { sc: 2.5, en: 0.125, te: undefined, ap: undefined },
      { sc: undefined, en: 2, te: [1, 3], ap: true },
      { sc: undefined, en: undefined, te: undefined, ap: undefined },
    ]);
    // Read as fields, not kept twice in the roll-out's extra.
    const extra = (rs[0] as { extra?: Record<string, unknown> }).extra ?? {};
    assert.equal('cl_token_entropies' in extra || 'cl_entropy' in extra, false);
    assert.equal(extra.cl_gate, 1);
    assert.equal((rs[1] as { extra?: Record<string, unknown> }).extra?.entropy, 7);
  } finally {
    cleanup();
  }
});

test('TRL completions table: the log_extra columns cl_self_certainty / cl_entropy are the fields, never a reward', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const prompts = ['p', 'p', 'p'];
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'step', data: prompts.map(() => '2'), type: 'STRING' },
        { name: 'prompt', data: prompts, type: 'STRING' },
        { name: 'completion', data: prompts.map((_, i) => `c ${i} \\boxed{${i}}`), type: 'STRING' },
        { name: 'consensus_selfcertainty', data: [0.5, -0.5, 0], type: 'DOUBLE' },
        { name: 'cl_entropy', data: [0.75, 1.25, Number.NaN], type: 'DOUBLE' },
        { name: 'cl_self_certainty', data: [3, 2, 2.5], type: 'DOUBLE' },
        { name: 'advantage', data: [1, -1, 0], type: 'DOUBLE' },
      ],
    });
    write(dir, 'completions/completions_00002.parquet', Buffer.from(buf));
    const { groups } = await collect(dir);
    assert.equal(groups.length, 1);
    const rs = groups[0].rollouts;
    assert.deepEqual(rs.map((r) => r.reward), [0.5, -0.5, 0]); // only the reward column, without trainer_state.json
    assert.deepEqual(rs.map((r) => r.selfCertainty), [3, 2, 2.5]);
    assert.deepEqual(rs.map((r) => r.entropy), [0.75, 1.25, Number.NaN]); // kept as logged: the operator refuses NaN by name
    assert.ok(rs.every((r) => r.confidenceApproximate === undefined));
    assert.deepEqual((rs[0] as { extra?: Record<string, unknown> }).extra, { consensus_selfcertainty: 0.5, advantage: 1 });
  } finally {
    cleanup();
  }
});

test('NeMo RL: generation log-probs give the marked approximation; values the loop logged are real', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const line = (resp: string, x: Record<string, unknown>) => ({ content: [['question?', resp]], rewards: [1], input_lengths: [4], idx: [0], ...x });
    write(
      dir,
      'train_data_step3.jsonl',
      jsonl([
        line('a \\boxed{1}', { generation_logprobs: [[0, 0, -0.5, -1.5]] }),
        line('b \\boxed{1}', { generation_logprobs: [[0, 0, -1, -1]], self_certainty: [4.5], entropy: [0.25], token_entropies: [[0.2, 0.3]] }),
      ]),
    );
    const { groups } = await collect(dir);
    assert.equal(groups.length, 1);
    const [a, b] = groups[0].rollouts;
    assert.deepEqual(conf(a), { sc: undefined, en: 1, te: [0.5, 1.5], ap: true });
    assert.deepEqual(conf(b), { sc: 4.5, en: 0.25, te: [0.2, 0.3], ap: undefined });
    assert.equal('entropy' in ((b as { extra?: Record<string, unknown> }).extra ?? {}), false);
  } finally {
    cleanup();
  }
});

test('a persisted run index gives the confidences back without reading the log again', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-conf-index-');
  try {
    write(dir, 'a.jsonl', jsonl([{ kind: 'group', step: 1, question_id: 'q', rollouts: [{ response: 'a', self_certainty: 2, entropy: 0.5, token_entropies: [0.5] }, { response: 'b', token_logprobs: [-1] }] }]));
    const file = join(store, 'run.cli');
    const key = cacheKey(dir, { index: 'followed' });
    const read = async () => {
      let bytes = 0;
      const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 60_000, idleMs: 50, onNotice: () => undefined, onProgress: (p) => (bytes = p.bytesRead), persist: { file, key } });
      try {
        await idx.settled();
        const state = idx.persisted.state;
        if (state === 'none') assert.ok((await idx.save({ tag: 't', of: () => undefined })) > 0);
        const e = idx.groups()[0];
        assert.ok(e.cold, 'saved (or restored): the group is on disk and is read back from there');
        const g = await idx.loadGroup(e.key);
        return { rollouts: g.rollouts.map(conf), state, bytes };
      } finally {
        idx.close();
      }
    };
    const first = await read();
    const second = await read();
    assert.equal(second.state, 'restored');
    assert.equal(second.bytes, 0, 'no log byte read');
    assert.deepEqual(second.rollouts, first.rollouts);
    assert.deepEqual(first.rollouts, [
      { sc: 2, en: 0.5, te: [0.5], ap: undefined },
      { sc: undefined, en: 1, te: [1], ap: true },
    ]);
  } finally {
    cleanup();
    cleanStore();
  }
});
