// Random histories of a run's files (appends, half-written lines, same-length rewrites with the
// times put back, truncations, files renamed over, deleted, new) under two windows: one that
// follows the run as it changes, and one that opens it anew each time from the index the other
// saved. After every change both have exactly the groups of a fresh read, texts included; each
// saves in turn, so a restored index is saved again too. Seeded: a failure names its seed and step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RunIndex, rolloutsOf } from '../../src/logs/log-layer.js';
import { cacheKey } from '../../src/logs/cache/cached-run.js';
import { tempDir } from './helpers.js';
import { randomHistory } from './random-history.js';

const IDLE_MS = 20;

/**
 * `saveEarly`: the window saves at the first change its read streams, part way through its read
 * (it reads 64 bytes at a time, and streams at each: part way through a file, as a huge file's).
 */
async function openIndex(dir: string, file: string, key: string, saveEarly = false): Promise<RunIndex> {
  let early: Promise<number> | undefined;
  const idx = await RunIndex.open(dir, {
    follow: true,
    poll: true,
    pollMs: 60_000,
    idleMs: IDLE_MS,
    streamMs: 0,
    readBlock: saveEarly ? 64 : undefined,
    onNotice: () => undefined,
    persist: { file, key },
    onStart: saveEarly ? (i) => void i.onDidChange(() => void (early ??= i.save())) : undefined,
  });
  await early;
  await settle(idx);
  return idx;
}

async function settle(idx: RunIndex): Promise<void> {
  await idx.refresh();
  await idx.settled();
}

/**
 * `idx`'s groups once they are `expected`, or as they are after 5 s: roll-out groups complete by
 * idleness (10 × IDLE_MS under their size), so a busy machine only makes this wait longer.
 */
async function agreed(idx: RunIndex, expected: unknown, ignoreComplete: boolean) {
  const until = Date.now() + 5000;
  for (;;) {
    await idx.settled();
    const c = await content(idx, ignoreComplete);
    if (Date.now() > until) return c;
    try {
      assert.deepEqual(c, expected);
      return c;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** What a group is: numbers, sources, texts (not its version, not whether it is on disk). */
async function content(idx: RunIndex, ignoreComplete = false) {
  const out = [];
  for (const e of idx.groups()) {
    const g = await idx.loadGroup(e.key);
    const rs = rolloutsOf(idx.group(e.key)!);
    out.push({ key: e.key, n: e.n, complete: ignoreComplete || e.complete, truth: e.groundTruth, rollouts: rs.map((r) => [r.reward, r.meanLogprob, r.sampleIdx, r.source.file, r.source.line]), texts: g.rollouts.map((r) => r.response) });
  }
  return out;
}

async function fresh(dir: string, ignoreComplete: boolean) {
  const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined });
  try {
    return await content(idx, ignoreComplete);
  } finally {
    idx.close();
  }
}

function history(seed: number, rounds: number) {
  return async () => {
    const { dir, cleanup } = tempDir('cl-persist-random-');
    const { dir: storage, cleanup: cleanStorage } = tempDir('cl-persist-random-store-');
    const file = join(storage, 'run.cli');
    const key = cacheKey(dir, { groundTruth: 'auto', index: 'followed' });
    const h = randomHistory(dir, seed);
    h.append('f0.jsonl', 4);
    let live = await openIndex(dir, file, key);
    try {
      for (let round = 0; round < rounds; round++) {
        const what = `seed ${seed}, round ${round}: ${h.next()}`;
        await settle(live);
        // a file that ends mid-line is being written: its roll-out groups stay open in a window
        // that follows it, where a read of the finished run closes them
        const mid = h.halfWritten > 0;
        const expected = await fresh(dir, mid);
        assert.deepEqual(await agreed(live, expected, mid), expected, `${what}: the window following the run`);
        if (round % 2 === 1) {
          // A window opened from the index saved before this change (or none): it reads the change
          // and saves at the first change its read streams, part way through its read; and a
          // window opened from that save.
          const early = await openIndex(dir, file, key, true);
          try {
            assert.deepEqual(await agreed(early, expected, mid), expected, `${what}: a window that saved part way through its read`);
          } finally {
            early.close();
          }
          const next = await openIndex(dir, file, key);
          try {
            assert.equal(next.persisted.state, 'restored', `${what}: the index saved part way through a read is used`);
            assert.deepEqual(await agreed(next, expected, mid), expected, `${what}: a window opened from an index saved part way through a read`);
          } finally {
            next.close();
          }
        }
        await live.save();
        // a new window: from the saved index, what changed since read again
        const reopened = await openIndex(dir, file, key);
        assert.equal(reopened.persisted.state, 'restored', `${what}: the saved index is used`);
        assert.deepEqual(await agreed(reopened, expected, mid), expected, `${what}: a window opened from the saved index`);
        if (round % 3 === 2) {
          // from now on the reopened window follows the run (its restored groups are saved again)
          live.close();
          live = reopened;
        } else reopened.close();
      }
      assert.ok(existsSync(file));
    } finally {
      live.close();
      cleanup();
      cleanStorage();
    }
  };
}

const SEEDS = process.env.CL_PERSIST_SEEDS ? process.env.CL_PERSIST_SEEDS.split(",").map(Number) : [1, 2, 3];
for (const seed of SEEDS) test(`random histories of a run's files, seed ${seed}: followed and reopened windows agree with a fresh read`, { timeout: 120_000 }, history(seed, 30));
