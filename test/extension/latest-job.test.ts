// LatestJob (src/extension/util/latest-job.ts): debounced, never two runs at once, and the view
// ends on the newest state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LatestJob } from '../../src/extension/util/latest-job';

/** A job whose runs are held until released: records when each run starts and whether two overlapped. */
function heldJob() {
  const starts: number[] = [];
  const releases: (() => void)[] = [];
  let active = 0;
  let overlapped = false;
  let state = 0;
  const job = new LatestJob(async () => {
    starts.push(state);
    active++;
    if (active > 1) overlapped = true;
    await new Promise<void>((r) => releases.push(r));
    active--;
  });
  return {
    job,
    starts,
    set: (s: number) => void (state = s),
    release: async () => {
      releases.shift()?.();
      await sleep(5);
    },
    overlapped: () => overlapped,
  };
}

test('calls within the delay collapse into one run', async () => {
  const h = heldJob();
  for (let i = 1; i <= 5; i++) {
    h.set(i);
    h.job.schedule(20);
  }
  await sleep(60);
  assert.deepEqual(h.starts, [5]);
  await h.release();
});

test('while a run is going, later calls make exactly one more run, on the newest state, never overlapping', async () => {
  const h = heldJob();
  h.set(1);
  h.job.schedule(0);
  await sleep(10);
  assert.equal(h.job.running, true);
  for (let i = 2; i <= 4; i++) {
    h.set(i);
    h.job.schedule(0);
    await sleep(5);
  }
  assert.deepEqual(h.starts, [1], 'nothing starts while the first run is going');
  await h.release();
  await sleep(10);
  assert.deepEqual(h.starts, [1, 4], 'one more run, on the newest state');
  await h.release();
  await sleep(10);
  assert.deepEqual(h.starts, [1, 4], 'and no third');
  assert.equal(h.job.running, false);
  assert.equal(h.overlapped(), false);
});

test('a failing run is reported and does not stop later runs; dispose cancels a pending start', async () => {
  const errors: unknown[] = [];
  let runs = 0;
  const job = new LatestJob(
    async () => {
      runs++;
      if (runs === 1) throw 'not an Error';
    },
    (e) => errors.push(e),
  );
  job.schedule(0);
  await sleep(10);
  job.schedule(0);
  await sleep(10);
  assert.equal(runs, 2);
  assert.deepEqual(errors, ['not an Error']);
  job.schedule(20);
  job.dispose();
  await sleep(40);
  job.schedule(0);
  await sleep(10);
  assert.equal(runs, 2, 'nothing runs after dispose');
});
