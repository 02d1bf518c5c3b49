// The persisted index of a followed run (src/logs/follow/persist.ts): a second open of an unchanged
// run reads no log byte and gives the groups of a fresh read; an appended file is read from where
// it stopped; a rewritten, truncated or replaced file is read again with new versions and fresh
// values; a corrupt or foreign index file is rebuilt, never trusted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize } from 'node:v8';
import { RunIndex, rolloutsOf, type RunProgress } from '../../src/logs/log-layer.js';
import { cacheKey } from '../../src/logs/cache/cached-run.js';
import { groupRec, jsonl, restoredByKey, rollout, tempDir, write } from './helpers.js';

const flip = (b: Buffer, at: number): Buffer => Buffer.from(b.map((x, i) => (i === at ? x ^ 1 : x)));

/** Where the first light record of a saved index is (from its trailer and table: follow/persist.ts). */
function lightRecordAt(b: Buffer): number {
  const tail = b.subarray(b.length - 44);
  const tableAt = tail.readDoubleLE(0);
  const table = deserialize(b.subarray(tableAt + 4, tableAt + tail.readUInt32LE(8))) as { spans: Float64Array };
  return table.spans[2];
}

async function open(dir: string, file: string, key = cacheKey(dir, { groundTruth: 'auto', index: 'followed' })) {
  let read = 0;
  const notices: string[] = [];
  const idx = await RunIndex.open(dir, {
    follow: true,
    poll: true,
    pollMs: 60_000,
    idleMs: 50,
    onNotice: (n) => notices.push(n.message),
    onProgress: (p: RunProgress) => (read = p.bytesRead),
    persist: { file, key },
  });
  await new Promise((r) => setTimeout(r, 150)); // roll-out groups complete by idleness
  await idx.settled();
  return { idx, read: () => read, notices };
}

/** What a group is, for comparison: numbers, sources and texts (no version). */
async function content(idx: RunIndex) {
  const out = [];
  for (const e of idx.groups()) {
    const g = await idx.loadGroup(e.key);
    out.push({ key: e.key, n: e.n, truth: e.groundTruth, rollouts: rolloutsOf(idx.group(e.key)!).map((r) => [r.reward, r.meanLogprob, r.sampleIdx, r.source.file, r.source.line, r.source.item ?? -1]), texts: g.rollouts.map((r) => r.response) });
  }
  return out;
}

async function freshContent(dir: string) {
  const { dir: other, cleanup } = tempDir('cl-index-fresh-');
  try {
    const f = await open(dir, join(other, 'none.cli'), 'fresh');
    try {
      return await content(f.idx);
    } finally {
      f.idx.close();
    }
  } finally {
    cleanup();
  }
}

test('a persisted index: unchanged → no log read, appended → only the new bytes, rewritten → fresh values, corrupt → rebuilt', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  try {
    const a = write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), groupRec(1, 'q2', 4)]));
    const b = write(dir, 'b.jsonl', jsonl([0, 1, 2].map((i) => rollout(2, 'r', i))));
    const first = await open(dir, file);
    assert.ok(first.read() > 0);
    assert.equal(first.idx.persisted.state, 'none');
    const saved = await first.idx.save({ tag: 't', of: (e) => `extra ${e.key}` });
    assert.ok(saved > 0 && statSync(file).size === saved);
    const firstContent = await content(first.idx);
    // saved: the complete groups went to disk (heads), and read back they are what was read
    assert.ok(first.idx.groups().every((e) => !!e.cold === e.complete) && first.idx.groups().some((e) => e.cold));
    assert.deepEqual(firstContent, await freshContent(dir));
    const firstVersions = new Map(first.idx.groups().map((e) => [e.key, e.version]));
    first.idx.close();

    // unchanged: nothing read from the logs, the same groups as a fresh read, new versions
    const second = await open(dir, file);
    assert.equal(second.read(), 0, 'no log byte read');
    assert.deepEqual(second.idx.persisted, { state: 'restored', trusted: 2, reread: 0 });
    assert.deepEqual(await content(second.idx), firstContent);
    assert.deepEqual(await content(second.idx), await freshContent(dir));
    for (const e of second.idx.groups()) assert.ok(e.version > firstVersions.get(e.key)!, 'a restored group is new to the process');
    const restored = restoredByKey(second.idx, 't');
    assert.equal(restored.size, 3);
    assert.equal(restored.get(second.idx.groups()[0].key), `extra ${second.idx.groups()[0].key}`);
    assert.equal(restoredByKey(second.idx, 't').size, 0, 'given once');
    await second.idx.save();
    second.idx.close();

    // appended: only the new bytes are read; the groups are those of a fresh read
    const before = statSync(b).size;
    appendFileSync(b, jsonl([rollout(2, 'r', 3), rollout(3, 's', 0)]));
    const third = await open(dir, file);
    assert.equal(third.read(), statSync(b).size - before, 'only the appended bytes are read');
    assert.deepEqual(third.idx.persisted, { state: 'restored', trusted: 2, reread: 0 });
    assert.deepEqual(await content(third.idx), await freshContent(dir));
    assert.equal(third.idx.group(third.idx.groups().find((e) => e.step === 2)!.key)!.n, 4);
    await third.idx.save({ tag: 't', of: () => 'x' });
    third.idx.close();

    // rewritten in place, the same length, and the times put back: re-read, fresh values
    const t = readFileSync(a, 'utf8');
    const u = t.replace('"reward":1', '"reward":0');
    assert.equal(u.length, t.length);
    const st = statSync(a);
    writeFileSync(a, u);
    const { utimesSync } = await import('node:fs');
    utimesSync(a, st.atime, st.mtime);
    const other = await open(dir, file);
    assert.equal(restoredByKey(other.idx, 'other').size, 0, 'extras of another tag are not given');
    other.idx.close();
    const fourth = await open(dir, file);
    assert.deepEqual(fourth.idx.persisted, { state: 'restored', trusted: 1, reread: 1 });
    assert.equal(fourth.read(), statSync(a).size, 'the rewritten file alone is read');
    const fresh = await freshContent(dir);
    assert.deepEqual(await content(fourth.idx), fresh);
    const q1 = fourth.idx.groups().find((e) => e.questionId === 'q1')!;
    assert.equal(rolloutsOf(q1)[1].reward, 0, 'the new value, never the saved one');
    const extras = restoredByKey(fourth.idx, 't');
    assert.ok(!extras.has(q1.key), "a re-read group's saved extras are not given");
    assert.equal(extras.size, 2, 'the unchanged file keeps its extras (its two groups)');
    await fourth.idx.save();
    fourth.idx.close();

    // replaced by another file (renamed over) and truncated
    write(dir, 'b.part', jsonl([rollout(2, 'r', 0)]));
    renameSync(join(dir, 'b.part'), b);
    const fifth = await open(dir, file);
    assert.deepEqual(fifth.idx.persisted, { state: 'restored', trusted: 1, reread: 1 });
    assert.deepEqual(await content(fifth.idx), await freshContent(dir));
    assert.equal(fifth.idx.groups().length, 3);
    await fifth.idx.save();
    fifth.idx.close();

    // corrupt (one byte flipped), foreign (another key), truncated: never trusted, rebuilt
    const good = readFileSync(file);
    for (const [what, bytes, key] of [
      ['a flipped byte in a light record', flip(good, lightRecordAt(good) + 10), undefined],
      ['a flipped byte in the table', flip(good, good.length - 60), undefined],
      ['a flipped byte in the header', flip(good, 20), undefined],
      ['truncated', good.subarray(0, good.length - 10), undefined],
      ['not ours', Buffer.from('hello'), undefined],
      ['another run', good, 'another key'],
    ] as const) {
      writeFileSync(file, bytes);
      const r = await open(dir, file, key);
      assert.equal(r.idx.persisted.state, 'rebuilt', what);
      assert.ok(r.read() > 0, `${what}: the logs are read`);
      assert.ok(r.notices.some((m) => m.includes('saved index not used')), what);
      assert.deepEqual(await content(r.idx), await freshContent(dir), what);
      r.idx.close();
    }
  } finally {
    cleanup();
    cleanStore();
  }
});

test('a group fed by two files, one of them rewritten under the saved index: its saved extras are not given, its roll-outs are fresh', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  try {
    write(dir, 'rank0.jsonl', jsonl([0, 1].map((i) => rollout(1, 'q', i))));
    const r1 = write(dir, 'rank1.jsonl', jsonl([2, 3].map((i) => rollout(1, 'q', i))));
    const first = await open(dir, file);
    assert.equal(first.idx.groups()[0].n, 4);
    await first.idx.save({ tag: 't', of: () => 'saved' });
    first.idx.close();
    writeFileSync(r1, jsonl([rollout(1, 'q', 2, { mean_logprob: -9 })]));
    const second = await open(dir, file);
    assert.deepEqual(second.idx.persisted, { state: 'restored', trusted: 1, reread: 1 });
    assert.equal(restoredByKey(second.idx, 't').size, 0, 'the group changed: its saved extra is stale');
    assert.deepEqual(await content(second.idx), await freshContent(dir));
    assert.deepEqual(rolloutsOf(second.idx.group(second.idx.groups()[0].key)!).map((r) => r.meanLogprob), [-0.1, -0.2, -9]);
    second.idx.close();
  } finally {
    cleanup();
    cleanStore();
  }
});

test('a restored group stays on disk until needed: heads only, its roll-outs read back on demand, checked; a corrupt record is found by the background check', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  try {
    // 150 groups: three saved records of 64
    write(dir, 'a.jsonl', jsonl(Array.from({ length: 150 }, (_, i) => ({ ...groupRec(1 + Math.floor(i / 10), `q${i}`, 4), prompt: `prompt ${i}` }))));
    const first = await open(dir, file);
    await first.idx.save({ tag: 't', of: (e) => ({ full: e.key, big: 'x'.repeat(100) }), light: (x) => ({ light: (x as { full: string }).full }) });
    first.idx.close();
    const second = await open(dir, file);
    const heads = second.idx.groups();
    assert.equal(heads.length, 150);
    for (const h of heads) {
      assert.ok(h.cold, 'a head, not the group');
      assert.ok(!('packed' in h) && !('list' in h) && !('prompt' in h));
    }
    assert.throws(() => rolloutsOf(heads[0] as Parameters<typeof rolloutsOf>[0]), /in the saved index, not loaded/);
    const last = second.idx.group(heads[149].key)!;
    assert.equal(last.prompt, 'prompt 149');
    assert.equal(rolloutsOf(last).length, 4);
    assert.equal(last.version, heads[149].version);
    assert.ok(second.idx.groups()[149].cold, 'reading a group does not keep it in memory');
    // the light extras at open, the full ones on demand
    assert.deepEqual(restoredByKey(second.idx, 't').get(heads[3].key), { light: heads[3].key });
    assert.deepEqual(second.idx.savedExtra(heads[3].key), { full: heads[3].key, big: 'x'.repeat(100) });
    assert.deepEqual(await content(second.idx), await freshContent(dir));
    second.idx.close();

    // a byte of the second heavy record flipped: the open takes the heads (their records are sound),
    // reading a group of that record fails with a clear error and makes the owner read the run again
    const bytes = readFileSync(file);
    const headerLen = bytes.readUInt32LE(8);
    let at = 8 + 4 + headerLen;
    at += 4 + bytes.readUInt32LE(at); // past the first heavy record
    bytes[at + 40] ^= 0xff;
    writeFileSync(file, bytes);
    let corrupt: string | undefined;
    const third = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 60_000, idleMs: 50, onNotice: () => undefined, persist: { file, key: cacheKey(dir, { groundTruth: 'auto', index: 'followed' }) } });
    third.onSavedCorrupt((why) => (corrupt = why));
    assert.equal(third.persisted.state, 'restored');
    assert.equal(third.group(heads[0].key)!.n, 4, 'the sound records are read');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(corrupt, undefined, 'no record is reported before it is read (nothing is checked in the background)');
    assert.throws(() => third.group(heads[70].key), /does not match its checksum/);
    assert.equal(corrupt, undefined, 'reported after the failed read, not under its caller');
    await new Promise((r) => setImmediate(r));
    assert.match(corrupt ?? '', /a saved record does not match its checksum/);
    third.close();
  } finally {
    cleanup();
    cleanStore();
  }
});

test("a restored run's size rule keeps count of the groups it restored: the same completions as a run never saved", async () => {
  // The usual group size (the rule that completes a roll-out group by its size) counts every
  // complete group; a restored head is counted with its own size without an entry of its own.
  // Groups dropped and added after the restore must move the count as they do in a run read from
  // its logs all along, or a roll-out group completes in one and not in the other.
  const { dir, cleanup } = tempDir();
  const file = join(dir, '..', `${dir.split('/').pop()}.cli`);
  const a = write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), groupRec(1, 'q2', 4)]));
  const c = write(dir, 'c.jsonl', jsonl([groupRec(2, 'q5', 2)]));
  const key = cacheKey(dir, { groundTruth: 'auto', index: 'followed' });
  const opts = { follow: true, poll: true, pollMs: 60_000, idleMs: 60_000, onNotice: () => undefined };
  try {
    const first = await RunIndex.open(dir, { ...opts, persist: { file, key } });
    assert.ok((await first.save()) > 0);
    first.close();
    // restored and saved again: the implicit counts go into the new file too
    const again = await RunIndex.open(dir, { ...opts, persist: { file, key } });
    assert.equal(again.persisted.state, 'restored');
    assert.ok((await again.save()) > 0);
    again.close();
    const restored = await RunIndex.open(dir, { ...opts, persist: { file, key } });
    const never = await RunIndex.open(dir, opts);
    assert.equal(restored.persisted.state, 'restored');
    const heads = (idx: RunIndex) => idx.groups().map((e) => [e.key, e.n, e.complete]);
    try {
      const steps: Array<[string, () => void]> = [
        ['a file replaced: its two groups of 4 dropped, one read again', () => {
          write(dir, 'a.part', jsonl([groupRec(1, 'q1', 4, { ground_truth: '2' })]));
          renameSync(join(dir, 'a.part'), a);
        }],
        ['another group of 2: 2 is the usual size now', () => appendFileSync(c, jsonl([groupRec(3, 'q6', 2)]))],
        ['a roll-out group of 2: complete by the usual size', () => write(dir, 'b.jsonl', jsonl([rollout(5, 'r', 0), rollout(5, 'r', 1)]))],
      ];
      for (const [what, change] of steps) {
        change();
        await restored.refresh();
        await never.refresh();
        assert.deepEqual(heads(restored), heads(never), what);
      }
      assert.ok(heads(never).some(([k, , complete]) => String(k).includes('"r"') && complete), 'the roll-out group completed by its size');
    } finally {
      restored.close();
      never.close();
    }
  } finally {
    cleanup();
    rmSync(file, { force: true });
  }
});

test('every field of a head comes back as it was read: run, stream, framework, outcome checks, no ground truth, a roll-out group', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  // a head: what every holder reads without loading the group (entries.ts GroupHead), its version and place aside
  const strip = (idx: RunIndex) => idx.groups().map(({ version: _v, cold: _c, ...h }) => {
    for (const k of ['packed', 'list', 'prompt', 'groundTruthForms', 'loggedOperator']) delete (h as Record<string, unknown>)[k];
    return h;
  });
  const opened: RunIndex[] = [];
  try {
    write(
      dir,
      'a.jsonl',
      jsonl([
        groupRec(1, 'q1', 4, { run_id: 'alpha', framework: 'verl', outcome_checks: [{ answer: '1', passed: 2, trials: 3 }] }),
        groupRec(1, 'q2', 4, { ground_truth: undefined }),
        groupRec(2, 'q1', 3, { run_id: 'beta' }),
      ]),
    );
    write(dir, 'b.jsonl', jsonl([0, 1, 2].map((i) => rollout(2, 'r', i))));
    // a verl validation dump: roll-out records of the validation stream
    write(dir, 'val/3.jsonl', jsonl([0, 1].map((i) => ({ input: 'What is 1+1?', output: `so \\boxed{${i}}`, score: i, reward: i, step: 3 }))));
    const first = await open(dir, file);
    opened.push(first.idx);
    const read = strip(first.idx);
    assert.ok(read.some((h) => h.run === 'alpha' && h.framework === 'verl' && h.outcomeChecks?.length === 1), JSON.stringify(read));
    assert.ok(read.some((h) => h.stream === 'validation' && h.origin === 'rollouts'));
    assert.ok(read.some((h) => h.groundTruth === null));
    await first.idx.save();
    const second = await open(dir, file);
    opened.push(second.idx);
    assert.equal(second.read(), 0, 'no log byte read');
    assert.ok(second.idx.groups().every((e) => e.cold), 'every group restored as a head');
    assert.deepEqual(strip(second.idx), read);
  } finally {
    for (const idx of opened) idx.close();
    cleanup();
    cleanStore();
  }
});

test('a restored group that completes by idleness is saved complete: the next window has it complete, not waiting for an idleness that never comes', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  const key = cacheKey(dir, { groundTruth: 'auto', index: 'followed' });
  const opened: RunIndex[] = [];
  const openWith = async (idleMs: number) => {
    const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 60_000, idleMs, onNotice: () => undefined, persist: { file, key } });
    opened.push(idx);
    await idx.settled();
    return idx;
  };
  const rGroup = (idx: RunIndex) => idx.groups().find((e) => e.questionId === 'r')!;
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), ...[0, 1, 2].map((i) => rollout(2, 'r', i))]));
    // 1. saved while the roll-out group waits (a long idle time)
    const first = await openWith(60_000);
    assert.equal(rGroup(first).complete, false);
    await first.save();
    first.close();
    // 2. restored (a head), then completed by idleness in place, and saved again from its head
    const second = await openWith(50);
    assert.equal(second.persisted.state, 'restored');
    assert.ok(rGroup(second).cold, 'restored as a head');
    const t0 = Date.now();
    while (!rGroup(second).complete && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 25));
    assert.equal(rGroup(second).complete, true, 'completed by idleness');
    assert.ok(rGroup(second).cold, 'still a head');
    await second.save();
    second.close();
    // 3. the next window: complete as saved (idleness would not complete it again: it is no longer waiting)
    const third = await openWith(60_000);
    assert.equal(third.persisted.state, 'restored');
    assert.equal(rGroup(third).complete, true);
    assert.equal(third.group(rGroup(third).key)!.complete, true);
  } finally {
    for (const idx of opened) idx.close();
    cleanup();
    cleanStore();
  }
});

test('a saved index found corrupt past its first records (heads already restored) is rebuilt from the logs: nothing restored is kept', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: store, cleanup: cleanStore } = tempDir('cl-index-store-');
  const file = join(store, 'run.cli');
  try {
    // three records of heads (64 groups each at most), and a group still open
    write(dir, 'a.jsonl', jsonl(Array.from({ length: 150 }, (_, i) => groupRec(1 + (i >> 4), `q${i}`, 3))));
    const first = await open(dir, file);
    const fresh = await content(first.idx);
    await first.idx.save({ tag: 't', of: (e) => `extra ${e.key}` });
    first.idx.close();
    const good = readFileSync(file);
    const tail = good.subarray(good.length - 44);
    const tableAt = tail.readDoubleLE(0);
    const table = deserialize(good.subarray(tableAt + 4, tableAt + tail.readUInt32LE(8))) as { spans: Float64Array };
    assert.equal(table.spans.length, 4 * 3);
    writeFileSync(file, flip(good, table.spans[4 * 2 + 2] + 10)); // the last light record
    const r = await open(dir, file);
    try {
      assert.equal(r.idx.persisted.state, 'rebuilt');
      assert.equal(r.idx.size, 150);
      assert.ok(r.idx.groups().every((e) => !e.cold));
      assert.deepEqual(await content(r.idx), fresh);
      assert.deepEqual([...r.idx.restoredExtras('t')], []);
    } finally {
      r.idx.close();
    }
  } finally {
    cleanup();
    cleanStore();
  }
});
