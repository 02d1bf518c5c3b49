// Saves part way through a first open, and saves that copy what is unchanged (follow/persist.ts,
// RunIndex.save during the initial read): a save asked for while a large file is being read runs at
// the next record boundary, with the file saved as it was up to there, so the next window finds it
// appended to and reads only the rest; a save whose records' groups and extras are all as saved
// copies those records byte for byte; either way a window opened from the file has a fresh read's
// groups and extras.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunIndex, SAVED_EXTRA, rolloutsOf, type RunProgress } from '../../src/logs/log-layer.js';
import { cacheKey } from '../../src/logs/cache/cached-run.js';
import { groupRec, jsonl, restoredByKey, rollout, tempDir, write } from './helpers.js';

/** Every index opened, closed after each test (a failed assertion leaves none following its run). */
const opened: RunIndex[] = [];
afterEach(() => {
  for (const i of opened.splice(0)) i.close();
});

async function open(dir: string, file: string, during?: (idx: RunIndex) => void) {
  let read = 0;
  const idx = await RunIndex.open(dir, {
    follow: true,
    poll: true,
    pollMs: 60_000,
    idleMs: 50,
    streamMs: 0,
    onNotice: () => undefined,
    onProgress: (p: RunProgress) => (read = p.bytesRead),
    onStart: during,
    persist: { file, key: cacheKey(dir, { groundTruth: 'auto', index: 'followed' }) },
  });
  opened.push(idx);
  await idx.settled();
  return { idx, read: () => read };
}

/** A test's run folder and the saved index file beside it (both removed afterwards). */
function withRun(name: string, body: (dir: string, file: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const { dir, cleanup } = tempDir(`${name}-`);
    const { dir: storage, cleanup: cleanStorage } = tempDir(`${name}-store-`);
    try {
      await body(dir, join(storage, 'run.cli'));
    } finally {
      cleanup();
      cleanStorage();
    }
  };
}

async function content(idx: RunIndex) {
  const out = [];
  for (const e of idx.groups()) {
    const g = await idx.loadGroup(e.key);
    out.push({ key: e.key, n: e.n, complete: e.complete, rollouts: rolloutsOf(idx.group(e.key)!).map((r) => [r.reward, r.meanLogprob, r.source.file, r.source.line]), texts: g.rollouts.map((r) => r.response) });
  }
  return out;
}

/** Steps of 16 questions, each a group record of 8 long roll-outs (~1.6 KB a line): `steps` × 16 groups. */
function bigRun(dir: string, steps: number): string {
  const recs = [];
  for (let s = 1; s <= steps; s++) for (let q = 0; q < 16; q++) recs.push({ ...groupRec(s, `q${q}`, 8), note: 'x'.repeat(1500) });
  return write(dir, 'run.jsonl', jsonl(recs));
}

test('a save asked for during a first read runs part way through the file; the next window reads only the rest and has a fresh read', withRun('cl-checkpoint', async (dir, file) => {
  // ~4.6 MiB: several of the reader's 1 MiB blocks, so the first change is streamed mid-file
  const log = bigRun(dir, 140);
  const size = statSync(log).size;
  let saved: Promise<number> | undefined;
  let groupsAtSave = 0;
  const first = await open(dir, file, (idx) => {
    idx.onDidChange(() => {
      if (saved) return;
      groupsAtSave = idx.size;
      saved = idx.save();
    });
  });
  assert.ok(saved, 'a change was streamed during the read');
  assert.ok((await saved) > 0, 'the save ran');
  assert.equal(first.idx.lastWrite?.partial, true, 'it ran part way through the file');
  assert.ok(groupsAtSave > 0 && groupsAtSave < first.idx.size, `saved at ${groupsAtSave} of ${first.idx.size} groups`);
  // what it saved went cold: the groups read after it are the ones held
  const cold = first.idx.groups().filter((e) => e.cold).length;
  assert.ok(cold >= groupsAtSave - 16 && cold < first.idx.size, `${cold} groups cold after the save`);
  assert.equal(first.idx.unsavedCount(), first.idx.size - cold);
  const expected = await content(first.idx);
  assert.equal(expected.length, 140 * 16);
  first.idx.close();

  // a window from that save: the file was saved up to a record, so it reads on from there
  const second = await open(dir, file);
  assert.deepEqual(second.idx.persisted, { state: 'restored', trusted: 1, reread: 0 });
  assert.ok(second.read() > 0 && second.read() < size, `read ${second.read()} of ${size} bytes`);
  assert.deepEqual(await content(second.idx), expected);
  // and its own save (after its read) makes a file the next window reads nothing for
  assert.ok((await second.idx.save()) > 0);
  assert.equal(second.idx.lastWrite?.partial, false);
  second.idx.close();
  const third = await open(dir, file);
  assert.equal(third.read(), 0);
  assert.deepEqual(await content(third.idx), expected);
  third.idx.close();
}));

test('a save of groups as saved copies their records; a changed extra is written anew; the next window has every extra as it was last saved', withRun('cl-checkpoint-copy', async (dir, file) => {
  bigRun(dir, 13); // 208 groups: records of 64, 64, 64 and 16
  const first = await open(dir, file);
  const full = (k: string) => ({ full: k });
  assert.ok((await first.idx.save({ tag: 't', of: (e) => full(e.key), light: (x) => ({ light: (x as { full: string }).full }) })) > 0);
  assert.deepEqual([first.idx.lastWrite?.chunks, first.idx.lastWrite?.copied], [4, 0]);
  const changed = first.idx.groups()[100].key;
  // every group's extra as saved but one: its record (the second) is written, the others copied
  const again = {
    tag: 't',
    of: (e: { key: string }) => (e.key === changed ? { full: 'changed' } : SAVED_EXTRA),
    unchanged: (k: string) => k !== changed,
    savedLight: (e: { key: string }) => ({ light: e.key }),
    light: (x: unknown) => ({ light: (x as { full: string }).full }),
  };
  assert.ok((await first.idx.save(again)) > 0);
  // the light records copied too (same record numbers, same files)
  assert.deepEqual([first.idx.lastWrite?.chunks, first.idx.lastWrite?.copied, first.idx.lastWrite?.copiedLight], [4, 3, 3]);
  // under another tag nothing saved before is this save's: nothing copied, no extra kept
  const expected = await content(first.idx);
  first.idx.close();

  const second = await open(dir, file);
  assert.equal(second.read(), 0);
  assert.deepEqual(await content(second.idx), expected);
  const heads = second.idx.groups();
  for (const h of heads) assert.deepEqual(second.idx.savedExtra(h.key), h.key === changed ? { full: 'changed' } : full(h.key), h.key);
  const lights = restoredByKey(second.idx, 't');
  assert.equal(lights.size, heads.length);
  for (const h of heads) assert.deepEqual(lights.get(h.key), { light: h.key === changed ? 'changed' : h.key });
  // another tag: the extras saved under 't' are not carried over, and no record is copied
  assert.ok((await second.idx.save({ tag: 'u', of: () => SAVED_EXTRA, unchanged: () => true, savedLight: () => 'stale' })) > 0);
  assert.equal(second.idx.lastWrite?.copied, 0);
  second.idx.close();
  const third = await open(dir, file);
  assert.equal(restoredByKey(third.idx, 'u').size, 0, 'no extra under the new tag');
  for (const h of third.idx.groups()) assert.equal(third.idx.savedExtra(h.key), undefined);
  third.idx.close();
}));

test('a file rewritten while it is read is not saved part way through: the save waits, and the next window reads the file anew', withRun('cl-checkpoint-rewrite', async (dir, file) => {
  const log = bigRun(dir, 140);
  let saved: Promise<number> | undefined;
  const first = await open(dir, file, (idx) => {
    idx.onDidChange(() => {
      if (saved) return;
      // the first question's rewards flipped in place, the same length, the times put back
      const st = statSync(log);
      const text = readFileSync(log, 'utf8');
      const flipped = text.replace('"reward":0', '"reward":1');
      assert.equal(flipped.length, text.length);
      writeFileSync(log, flipped);
      utimesSync(log, st.atime, st.mtime);
      saved = idx.save();
    });
  });
  assert.ok((await saved!) > 0);
  assert.equal(first.idx.lastWrite?.partial, false, 'saved once the read was over, not part way through the file');
  await first.idx.refresh();
  const fresh = await content(first.idx);
  assert.equal(fresh[0].rollouts[0][0], 1, 'the window following the run has the new value');
  first.idx.close();
  const second = await open(dir, file);
  assert.deepEqual(second.idx.persisted, { state: 'restored', trusted: 0, reread: 1 });
  assert.deepEqual(await content(second.idx), fresh);
}));

test('a light record is copied only while the files keep their numbers: a file deleted before others renumbers them, and what each file fed stays right', withRun('cl-checkpoint-files', async (dir, file) => {
  // b and c feed the groups of step 1 (c only continues them); d and e those of step 2: 64 groups each, a record each
  const part = (step: number, from: number, to: number) => jsonl(Array.from({ length: 64 }, (_, q) => Array.from({ length: to - from }, (_, i) => rollout(step, `q${q}`, from + i, { reward: (q + i) % 2 }))).flat());
  write(dir, 'b.jsonl', part(1, 0, 2));
  write(dir, 'c.jsonl', part(1, 2, 3));
  write(dir, 'd.jsonl', part(2, 0, 2));
  const e = write(dir, 'e.jsonl', part(2, 2, 3));
  // what changed read, and the roll-out groups complete (by idleness)
  const settle = async (idx: RunIndex) => {
    await idx.refresh();
    for (let t = 0; t < 100 && !idx.groups().every((g) => g.complete); t++) await new Promise((r) => setTimeout(r, 50));
    await idx.settled();
  };
  const first = await open(dir, file);
  await settle(first.idx);
  assert.ok(first.idx.groups().every((g) => g.complete && g.n === 3));
  assert.ok((await first.idx.save()) > 0);
  // c goes: step 1's groups change, step 2's record is as saved, at the same number — but d and e are files 1 and 2 now, not 2 and 3
  rmSync(join(dir, 'c.jsonl'));
  await settle(first.idx);
  assert.ok((await first.idx.save()) > 0);
  assert.deepEqual([first.idx.lastWrite?.copied, first.idx.lastWrite?.copiedLight], [1, 0], 'the heavy record copied, its light record written anew');
  first.idx.close();
  // a window from that save: e rewritten (its roll-outs dropped from step 2's groups, read again)
  const second = await open(dir, file);
  assert.equal(second.read(), 0);
  const st = statSync(e);
  writeFileSync(e, readFileSync(e, 'utf8').replaceAll('"reward":0', '"reward":7').replaceAll('"reward":1', '"reward":0').replaceAll('"reward":7', '"reward":1'));
  utimesSync(e, st.atime, st.mtime);
  await settle(second.idx);
  const got = await content(second.idx);
  second.idx.close();
  const { dir: other, cleanup: cleanOther } = tempDir('cl-checkpoint-files-fresh-');
  try {
    const fresh = await open(dir, join(other, 'none.cli'));
    await settle(fresh.idx);
    assert.deepEqual(got, await content(fresh.idx));
  } finally {
    cleanOther();
  }
}));
