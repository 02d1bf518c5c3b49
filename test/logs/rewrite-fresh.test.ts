// A followed run whose files are rewritten under it (replaced, truncated and rewritten, the same
// length in place, appended, deleted) ends up with exactly the groups of a fresh read — readRun and
// a fresh static index — texts included, and every changed group under a new version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunIndex, rolloutsOf } from '../../src/logs/log-layer.js';
import { collect, groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

async function snapshot(idx: RunIndex) {
  const out = [];
  for (const e of idx.groups()) {
    const g = await idx.loadGroup(e.key);
    out.push({ key: e.key, n: e.n, rollouts: rolloutsOf(e).map((r) => [r.reward, r.meanLogprob, r.sampleIdx]), texts: g.rollouts.map((r) => r.response) });
  }
  return out;
}

async function fresh(dir: string) {
  const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
  try {
    const s = await snapshot(idx);
    const { groups } = await collect(dir);
    assert.deepEqual(
      s.map((g) => [g.key.slice(1, -1).split(',').slice(1).join(','), g.texts]),
      groups.map((g) => [`${g.step},${JSON.stringify(g.questionId)}`, g.rollouts.map((r) => r.response)]),
      'the static index and readRun agree',
    );
    return s;
  } finally {
    idx.close();
  }
}

test('a followed run rewritten under it: the same groups as a fresh read, every time', async () => {
  const { dir, cleanup } = tempDir();
  const a = write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), groupRec(1, 'q2', 4)]));
  const b = write(dir, 'b.jsonl', jsonl([0, 1, 2].map((i) => rollout(2, 'r', i))));
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 60_000, idleMs: 100, onNotice: () => undefined });
  const settle = async () => {
    await idx.refresh();
    await new Promise((r) => setTimeout(r, 250)); // the idle period completes roll-out groups
    await idx.settled();
  };
  const versions = () => new Map(idx.groups().map((e) => [e.key, e.version]));
  try {
    await settle();
    assert.deepEqual(await snapshot(idx), await fresh(dir));
    const steps: Array<[string, () => void]> = [
      ['replaced', () => {
        write(dir, 'a.part', jsonl([groupRec(1, 'q1', 5, { ground_truth: '2' }), groupRec(1, 'q3', 2)]));
        renameSync(join(dir, 'a.part'), a);
      }],
      ['truncated and rewritten', () => writeFileSync(b, jsonl([rollout(2, 'r', 0), rollout(2, 's', 0)]))],
      ['rewritten in place, the same length', () => {
        const t = readFileSync(a, 'utf8');
        const u = t.replace(/g q1 0/g, 'x q1 0').replace(/g q3 1/g, 'y q3 1');
        assert.equal(u.length, t.length);
        const st = statSync(a);
        writeFileSync(a, u);
        // even with the modification time it had (timestamps are coarse)
        utimesSync(a, st.atime, st.mtime);
      }],
      ['appended', () => appendFileSync(a, jsonl([groupRec(3, 'q9', 3)]))],
      ['deleted', () => rmSync(b)],
    ];
    for (const [what, change] of steps) {
      const before = versions();
      change();
      await settle();
      const now = await snapshot(idx);
      assert.deepEqual(now, await fresh(dir), what);
      // a group whose content changed has a new, larger version; none went back
      for (const e of idx.groups()) {
        const v = before.get(e.key);
        if (v !== undefined) assert.ok(e.version >= v, `${what}: ${e.key} version went back`);
      }
    }
  } finally {
    idx.close();
    cleanup();
  }
});
