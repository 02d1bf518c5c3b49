// Fault tests with real files: invalid UTF-8, a 50 MB roll-out, an empty file, 10,000 small files,
// a symlink loop. Each checks that nothing already loaded is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunIndex, readRun, rolloutsOf, type Notice } from '../../src/logs/log-layer.js';
import { collect, groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

async function index(path: string) {
  const notices: Notice[] = [];
  const idx = await RunIndex.open(path, { follow: false, onNotice: (n) => notices.push(n) });
  return { idx, notices };
}

test('invalid UTF-8 bytes: the line loads with U+FFFD, reported once with file:line', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const good = Buffer.from(JSON.stringify(groupRec(1, 'a', 2)) + '\n');
    const bad1 = Buffer.concat([Buffer.from('{"step":1,"question_id":"b","sample_idx":0,"response":"x'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' \\\\boxed{1}"}\n')]);
    const bad2 = Buffer.concat([Buffer.from('{"step":1,"question_id":"b","sample_idx":1,"response":"'), Buffer.from([0x80]), Buffer.from('"}\n')]);
    const f = write(dir, 'run.jsonl', Buffer.concat([good, bad1, bad2]));
    for (const reader of ['readRun', 'RunIndex'] as const) {
      let notices: Notice[];
      let texts: string[];
      if (reader === 'readRun') {
        const r = await collect(dir);
        notices = r.notices;
        assert.deepEqual(r.groups.map((g) => g.questionId), ['a', 'b']);
        texts = r.groups[1].rollouts.map((x) => x.response);
      } else {
        const r = await index(dir);
        notices = r.notices;
        assert.deepEqual(r.idx.groups().map((g) => g.questionId), ['a', 'b']);
        texts = (await r.idx.loadGroup(r.idx.groups()[1].key)).rollouts.map((x) => x.response);
      }
      assert.ok(texts[0].startsWith('x\uFFFD'));
      assert.ok(texts[0].endsWith(' \\boxed{1}'));
      assert.equal(texts[1], '\uFFFD');
      assert.equal(notices.length, 1);
      assert.equal(notices[0].file, f);
      assert.equal(notices[0].line, 2);
      assert.match(notices[0].message, /invalid UTF-8/);
    }
  } finally {
    cleanup();
  }
});

test('a single 50 MB roll-out: indexed without its text, read back by offset', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const big = 'x'.repeat(50 * 1024 * 1024) + ' \\boxed{7}';
    const before = JSON.stringify(groupRec(1, 'before', 2)) + '\n';
    const line = JSON.stringify(rollout(1, 'big', 0, { response: big })) + '\n';
    const after = JSON.stringify(groupRec(1, 'after', 2)) + '\n';
    writeFileSync(join(dir, 'run.jsonl'), before + line + after);
    const { idx, notices } = await index(dir);
    assert.deepEqual(notices, []);
    assert.deepEqual(idx.groups().map((g) => g.questionId), ['before', 'big', 'after']);
    const e = idx.groups()[1];
    assert.equal(rolloutsOf(e)[0].source.offset, Buffer.byteLength(before));
    assert.equal(rolloutsOf(e)[0].source.length, Buffer.byteLength(line) - 1);
    const text = await idx.readRolloutText(rolloutsOf(e)[0].source);
    assert.equal(text.length, big.length);
    assert.ok(text.endsWith('\\boxed{7}'));
    const { groups } = await collect(dir);
    assert.equal(groups[1].rollouts[0].response.length, big.length);
    idx.close();
  } finally {
    cleanup();
  }
});

test('an empty file among good ones: one notice, the others load', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'a', 2)]));
    write(dir, 'b.jsonl', '');
    write(dir, 'c.jsonl', '\n\n');
    const { idx, notices } = await index(dir);
    assert.deepEqual(idx.groups().map((g) => g.questionId), ['a']);
    assert.deepEqual(notices.map((n) => [n.level, n.file]), [['warning', join(dir, 'b.jsonl')], ['warning', join(dir, 'c.jsonl')]]);
    const r = await collect(join(dir, 'b.jsonl'));
    assert.deepEqual(r.groups, []);
    assert.match(r.notices[0].message, /b\.jsonl: empty file/);
  } finally {
    cleanup();
  }
});

test('a folder of 10,000 small files', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const N = 10_000;
    for (let i = 0; i < N; i++) {
      writeFileSync(join(dir, `${i}.jsonl`), JSON.stringify(rollout(Math.floor(i / 4), `q${i % 4}`, 0)) + '\n' + JSON.stringify(rollout(Math.floor(i / 4), `q${i % 4}`, 1)) + '\n');
    }
    const { idx, notices } = await index(dir);
    assert.deepEqual(notices, []);
    assert.equal(idx.size, N);
    assert.equal(idx.groups()[0].questionId, 'q0');
    assert.equal(idx.groups()[N - 1].step, (N - 1) >> 2);
    let n = 0;
    for await (const g of readRun(dir, () => undefined)) n += g.rollouts.length;
    assert.equal(n, 2 * N);
  } finally {
    cleanup();
  }
});

test('a symlink loop (folder link to an ancestor, self-referencing file link) terminates', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'a', 2)]));
    mkdirSync(join(dir, 'sub'));
    write(dir, 'sub/b.jsonl', jsonl([groupRec(1, 'b', 2)]));
    symlinkSync(dir, join(dir, 'sub', 'loop'));
    symlinkSync(join(dir, 'self'), join(dir, 'self'));
    const { idx, notices } = await index(dir);
    assert.deepEqual(idx.groups().map((g) => g.questionId).sort(), ['a', 'b']);
    assert.ok(notices.every((n) => n.level === 'warning' && /loop|link to a folder, not followed/.test(n.message)), JSON.stringify(notices));
    const { groups } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.questionId).sort(), ['a', 'b']);
  } finally {
    cleanup();
  }
});

test('static index: malformed mid-file line and half-written last line are reported, the rest loads', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = write(dir, 'run.jsonl', JSON.stringify(groupRec(1, 'a', 2)) + '\n{oops\n' + JSON.stringify(groupRec(1, 'b', 2)) + '\n{"kind":"group","st');
    const { idx, notices } = await index(dir);
    assert.deepEqual(idx.groups().map((g) => g.questionId), ['a', 'b']);
    assert.deepEqual(notices.map((n) => [n.file, n.line]), [[f, 2], [f, 4]]);
    assert.match(notices[1].message, /incomplete last line/);
    const r = await collect(dir);
    assert.deepEqual(r.groups.map((g) => g.questionId), ['a', 'b']);
    assert.deepEqual(r.notices.map((n) => [n.file, n.line]), [[f, 2], [f, 4]]);
  } finally {
    cleanup();
  }
});

test('index entries keep numbers and offsets, not texts; loadGroup matches readRun', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'g', 3), rollout(1, 'r', 1), rollout(1, 'r', 0, { answer: '5', verification: { valid: false } })]));
    const { idx } = await index(dir);
    const { groups } = await collect(dir);
    const es = idx.groups();
    assert.equal(es.length, 2);
    assert.ok(es.every((e) => e.complete));
    assert.ok(!JSON.stringify(es).includes('boxed'), 'no roll-out text in the index');
    assert.deepEqual(rolloutsOf(es[1]).map((r) => [r.sampleIdx, r.answer, r.verification]), [[0, '5', { valid: false }], [1, null, null]]);
    for (let i = 0; i < 2; i++) {
      const g = await idx.loadGroup(es[i].key);
      assert.deepEqual(g, groups[i]);
    }
    // concurrent reads of one group line (Promise.all) parse it once and give each its own text
    const texts = await Promise.all(rolloutsOf(es[0]).map((r) => idx.readRolloutText(r.source, es[0].version)));
    assert.deepEqual(texts, groups[0].rollouts.map((r) => r.response));
    assert.equal(es[0].n, 3);
    assert.deepEqual(rolloutsOf(es[0]), rolloutsOf(es[0]));
    idx.close();
  } finally {
    cleanup();
  }
});

test('initial read reports progress and can be cancelled', async () => {
  const { dir, cleanup } = tempDir();
  try {
    for (let i = 0; i < 300; i++) writeFileSync(join(dir, `${i}.jsonl`), jsonl([groupRec(i, 'q', 2)]));
    const seen: number[] = [];
    const idx = await RunIndex.open(dir, { follow: false, onNotice: () => undefined, onProgress: (p) => seen.push(p.filesRead / p.totalFiles) });
    assert.equal(idx.size, 300);
    assert.equal(seen[seen.length - 1], 1);
    idx.close();
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(RunIndex.open(dir, { follow: true, onNotice: () => undefined, signal: ac.signal }), (e: Error) => e.name === 'AbortError');
  } finally {
    cleanup();
  }
});
