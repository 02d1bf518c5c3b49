// Live tail faults: every test runs with fs.watch events and with polling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunIndex, rolloutsOf, type Notice, type RunChange } from '../../src/logs/log-layer.js';
import { groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

async function waitFor(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function follow(path: string, poll: boolean, idleMs = 400) {
  const notices: Notice[] = [];
  const events: RunChange[] = [];
  const idx = await RunIndex.open(path, { follow: true, poll, pollMs: 100, idleMs, onNotice: (n) => notices.push(n) });
  idx.onDidChange((e) => events.push(e));
  await idx.settled();
  const qids = () => idx.groups().map((g) => g.questionId);
  return { idx, notices, events, qids };
}

for (const poll of [false, true]) {
  const mode = poll ? 'poll' : 'watch';

  test(`[${mode}] mode is reported; half-written last line waits, then loads`, async () => {
    const { dir, cleanup } = tempDir();
    const f = join(dir, 'run.jsonl');
    const line2 = JSON.stringify(groupRec(1, 'q2', 3));
    writeFileSync(f, JSON.stringify(groupRec(1, 'q1', 2)) + '\n' + line2.slice(0, 40));
    const { idx, notices, qids, events } = await follow(dir, poll);
    try {
      assert.equal(idx.mode, mode);
      assert.ok(notices.some((n) => n.level === 'info' && n.message.includes(poll ? 'polling' : 'file-system events')));
      assert.deepEqual(qids(), ['q1']);
      appendFileSync(f, line2.slice(40, 80));
      await new Promise((r) => setTimeout(r, 250));
      assert.deepEqual(qids(), ['q1']);
      appendFileSync(f, line2.slice(80) + '\n');
      await waitFor(() => qids().length === 2, 'the completed line');
      assert.deepEqual(qids(), ['q1', 'q2']);
      // Change events are delivered after the index updates: wait for it rather than assume it.
      await waitFor(() => events.some((e) => e.completed.includes(idx.groups()[1].key)), 'the completion event');
      assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
      assert.equal((await idx.loadGroup(idx.groups()[1].key)).rollouts[2].response, 'g q2 2 \\boxed{2}');
    } finally {
      idx.close();
      cleanup();
    }
  });

  test(`[${mode}] malformed line mid-file reported once as file:line; appended lines still load`, async () => {
    const { dir, cleanup } = tempDir();
    const f = join(dir, 'run.jsonl');
    writeFileSync(f, JSON.stringify(groupRec(1, 'a', 2)) + '\n{"kind":"group",,,}\n' + JSON.stringify(groupRec(1, 'b', 2)) + '\n');
    const { idx, notices, qids } = await follow(dir, poll);
    try {
      assert.deepEqual(qids(), ['a', 'b']);
      appendFileSync(f, JSON.stringify(groupRec(1, 'c', 2)) + '\n');
      await waitFor(() => qids().length === 3, 'appended group');
      const bad = notices.filter((n) => n.level === 'warning');
      assert.equal(bad.length, 1);
      assert.equal(bad[0].file, f);
      assert.equal(bad[0].line, 2);
      assert.match(bad[0].message, new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: malformed JSON`));
    } finally {
      idx.close();
      cleanup();
    }
  });

  test(`[${mode}] truncated file is re-read from scratch; other files keep their groups`, async () => {
    const { dir, cleanup } = tempDir();
    const f = write(dir, 'run.jsonl', jsonl([groupRec(1, 'a', 2), groupRec(1, 'b', 2)]));
    write(dir, 'other.jsonl', jsonl([groupRec(1, 'keep', 2)]));
    const { idx, notices, qids, events } = await follow(dir, poll);
    try {
      assert.deepEqual(qids().sort(), ['a', 'b', 'keep']);
      truncateSync(f, 0);
      await waitFor(() => qids().length === 1, 'truncation');
      appendFileSync(f, JSON.stringify(groupRec(2, 'c', 3)) + '\n');
      await waitFor(() => qids().length === 2, 're-append');
      assert.deepEqual(qids().sort(), ['c', 'keep']);
      await waitFor(() => events.some((e) => e.removed.length === 2), 'the removal event');
      assert.ok(notices.some((n) => n.file === f && /truncated/.test(n.message)));
      const c = idx.groups().find((g) => g.questionId === 'c')!;
      assert.equal((await idx.loadGroup(c.key)).rollouts.length, 3);
    } finally {
      idx.close();
      cleanup();
    }
  });

  test(`[${mode}] file replaced by a rename over it; new files appear; deleted file drops its groups`, async () => {
    const { dir, cleanup } = tempDir();
    const f = write(dir, 'run.jsonl', jsonl([groupRec(1, 'old1', 2), groupRec(1, 'old2', 2)]));
    write(dir, 'keep.jsonl', jsonl([groupRec(1, 'keep', 2)]));
    const { idx, notices, qids } = await follow(dir, poll);
    try {
      const tmp = write(dir, '.run.jsonl.tmp', jsonl([groupRec(1, 'new1', 2), groupRec(1, 'new2', 2), groupRec(1, 'new3', 2)]));
      renameSync(tmp, f);
      await waitFor(() => qids().includes('new3') && !qids().includes('old1'), 'replacement');
      assert.deepEqual(qids().sort(), ['keep', 'new1', 'new2', 'new3']);
      write(dir, 'sub/late.jsonl', jsonl([groupRec(2, 'late', 2)]));
      await waitFor(() => qids().includes('late'), 'new file in a new folder', 12_000);
      rmSync(f);
      await waitFor(() => !qids().includes('new1'), 'deletion');
      assert.deepEqual(qids().sort(), ['keep', 'late']);
      assert.ok(notices.some((n) => n.level === 'warning' && n.file === f && /deleted/.test(n.message)));
    } finally {
      idx.close();
      cleanup();
    }
  });

  test(`[${mode}] roll-out records: group completes at the modal size, or when idle; late roll-outs bump the revision`, async () => {
    const { dir, cleanup } = tempDir();
    const f = write(dir, 'run.jsonl', jsonl([0, 1, 2].map((i) => rollout(1, 'a', i))));
    // A long idle timeout, so that b does not complete by idleness between its roll-outs on a loaded machine.
    const idle = 1500;
    const { idx, qids, events } = await follow(dir, poll, idle);
    try {
      assert.deepEqual(qids(), ['a']);
      assert.equal(idx.groups()[0].complete, false);
      await waitFor(() => idx.groups()[0].complete, 'idle completion');
      // the modal size is now 3: a second group completes as soon as its third roll-out arrives
      appendFileSync(f, jsonl([rollout(1, 'b', 0), rollout(1, 'b', 1)]));
      await waitFor(() => qids().length === 2, 'b');
      assert.equal(idx.group(idx.groups()[1].key)!.complete, false);
      assert.equal(idx.completeCount(), 1, 'a complete, b not yet');
      const b = idx.groups()[1].key;
      const from = events.length;
      appendFileSync(f, jsonl([rollout(1, 'b', 2)]));
      await waitFor(() => events.slice(from).some((e) => e.completed.includes(b)), 'size completion');
      // by size: the change that brought its third roll-out completes it (by idleness, a later one would)
      const first = events.slice(from).find((e) => e.grown.includes(b) || e.completed.includes(b) || e.changed.includes(b));
      assert.ok(first?.completed.includes(b), 'completed in the change that brought its usual size');
      const firstVersion = idx.groups()[0].version;
      appendFileSync(f, jsonl([rollout(1, 'a', 3)]));
      await waitFor(() => idx.groups()[0].n === 4, 'late roll-out');
      assert.ok(idx.groups()[0].version > firstVersion, 'a new version');
      assert.equal(rolloutsOf(idx.groups()[0]).length, 4);
      // the late roll-out reopens the group; it completes again (once) by idleness, not by size
      const before = events.length;
      await waitFor(() => events.slice(before).some((e) => e.completed.includes(idx.groups()[0].key)), 'the completion event after reopening');
      assert.equal(idx.groups()[0].complete, true);
      // a later step in the same file completes the earlier step's groups
      appendFileSync(f, jsonl([rollout(2, 'c', 0), rollout(3, 'd', 0)]));
      await waitFor(() => qids().length === 4, 'c, d');
      assert.equal(idx.groups()[2].complete, true);
    } finally {
      idx.close();
      cleanup();
    }
  });
}

test('a single-file run is followed through its folder (replacement keeps working)', async () => {
  const { dir, cleanup } = tempDir();
  const f = write(dir, 'one.jsonl', jsonl([groupRec(1, 'a', 2)]));
  write(dir, 'ignored.jsonl', jsonl([groupRec(1, 'x', 2)]));
  const { idx, qids } = await follow(f, false);
  try {
    assert.deepEqual(qids(), ['a']);
    const tmp = write(dir, 'tmp.part', jsonl([groupRec(1, 'b', 2)]));
    renameSync(tmp, f);
    await waitFor(() => qids().join() === 'b', 'replacement');
    appendFileSync(f, jsonl([groupRec(1, 'c', 2)]));
    await waitFor(() => qids().join() === 'b,c', 'append after replacement');
  } finally {
    idx.close();
    cleanup();
  }
});

test('empty file in a followed run: later content is read', async () => {
  const { dir, cleanup } = tempDir();
  const f = write(dir, 'run.jsonl', '');
  const { idx, qids, notices } = await follow(dir, true);
  try {
    assert.deepEqual(qids(), []);
    appendFileSync(f, JSON.stringify(groupRec(0, 'a', 2)) + '\n');
    await waitFor(() => qids().length === 1, 'content');
    assert.deepEqual(notices.filter((n) => n.level !== 'info'), []);
  } finally {
    idx.close();
    cleanup();
  }
});

test('[poll] a file rewritten to a larger size between two polls is re-read from scratch', async () => {
  const { dir, cleanup } = tempDir();
  const f = write(dir, 'run.jsonl', jsonl([groupRec(1, 'a', 2), groupRec(1, 'b', 2)]));
  const notices: Notice[] = [];
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 300, idleMs: 400, onNotice: (n) => notices.push(n) });
  try {
    assert.deepEqual(idx.groups().map((g) => g.questionId), ['a', 'b']);
    // same inode, same first bytes, larger size: only the bytes before the old end tell
    writeFileSync(f, jsonl([groupRec(1, 'a', 2), groupRec(1, 'c', 3), groupRec(1, 'd', 3)]));
    await waitFor(() => idx.groups().map((g) => g.questionId).join() === 'a,c,d', 'the rewrite');
    assert.ok(!notices.some((n) => n.level !== 'info'), JSON.stringify(notices));
  } finally {
    idx.close();
    cleanup();
  }
});
