// The consensus panel's token curves read back from a run's records (src/extension/tokens/curves.ts):
// which roll-outs get a curve, the line on what is logged, and the bound on what a switch reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunIndex } from '../../src/logs/log-layer';
import { readTokenCurves } from '../../src/extension/tokens/curves';

const rollouts = [
  { response: 'so x is 7', token_logprobs: [-0.1, -0.2, -2.5, -0.01], tokens: ['so', ' x', ' is', ' 7'] },
  { response: 'x is 8', token_logprobs: [-0.3, -1.0, -0.05] },
  { response: 'maybe 7', mean_logprob: -0.4 },
  { response: 'I think 9' },
];

test('curves for the roll-outs with per-token log-probs, and a line on what the group logs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-curves-'));
  try {
    writeFileSync(join(dir, 'step_1.jsonl'), JSON.stringify({ kind: 'group', step: 1, question_id: 'q', rollouts }) + '\n');
    const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
    try {
      const r = await readTokenCurves(idx.groups()[0]);
      assert.deepEqual(
        r.rows.map((x) => [x.index, x.kind, x.tokens, x.curve.length]),
        [
          [0, 'tokens', 4, 4],
          [1, 'logprobs', 3, 3],
          [2, 'mean', 0, 0],
          [3, 'none', 0, 0],
        ],
      );
      assert.deepEqual(r.rows[0].curve, [-0.1, -0.2, -2.5, -0.01]);
      assert.match(r.note!, /^Token confidence — 1 of 4 roll-outs: log-probs and text .*1 of 4 roll-outs: per-token log-probs \(token_logprobs\) without the tokens’ text.*1 of 4 roll-outs: only the mean log-prob — no curve; 1 of 4 roll-outs: no log-probs/);
    } finally {
      idx.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a switch reads a bounded number of bytes of records: the rest is said, not read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cl-curves-'));
  try {
    const lines = rollouts.map((r, i) => JSON.stringify({ kind: 'rollout', step: 1, question_id: 'q', sample_idx: i, ...r }));
    writeFileSync(join(dir, 'step_1.jsonl'), lines.join('\n') + '\n');
    const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
    try {
      const e = idx.groups()[0];
      const budget = Buffer.byteLength(lines[0]) + Buffer.byteLength(lines[1]);
      const r = await readTokenCurves(e, undefined, budget);
      assert.deepEqual(
        r.rows.map((x) => x.index),
        [0, 1],
      );
      assert.match(r.note!, /Token confidence: the last 2 roll-outs’ records are not read here \(over \d+ bytes\): open one to see its tokens\.$/);
      assert.equal((await readTokenCurves(e)).rows.length, 4);
    } finally {
      idx.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
