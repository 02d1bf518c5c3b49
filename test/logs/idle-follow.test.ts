// A followed run with nothing left to complete costs the host no timer but the watcher's safety
// rescan (whose interval grows while no file event comes): an idle window with a huge run open
// does no periodic work per group. A group of roll-out records still open arms the idle check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { RunIndex } from '../../src/logs/log-layer.js';
import { groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('an idle followed run sets no idle timer; an open roll-out group arms one until it completes', async () => {
  const { dir, cleanup } = tempDir();
  const f = write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), groupRec(1, 'q2', 4)]));
  const before = timers();
  const idx = await RunIndex.open(dir, { follow: true, idleMs: 100, onNotice: () => undefined });
  try {
    await idx.settled();
    assert.equal(idx.mode, 'watch');
    assert.equal(timers() - before, 1, 'the safety rescan only');
    appendFileSync(f, jsonl([rollout(2, 'r', 0)]));
    await new Promise((r) => setTimeout(r, 60)); // the file event's debounce
    await idx.settled();
    assert.equal(idx.group(idx.groups()[2].key)?.complete, false);
    assert.equal(timers() - before, 2, 'the idle check while a group is open');
    await new Promise((r) => setTimeout(r, 1500)); // under its stream's usual size: ten idle periods
    await idx.settled();
    assert.equal(idx.groups()[2].complete, true);
    assert.equal(timers() - before, 1, 'no idle check once every group is complete');
  } finally {
    idx.close();
    cleanup();
  }
});
