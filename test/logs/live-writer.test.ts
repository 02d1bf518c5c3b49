// A live verl writer: verl's V1 trainer appends a step file line by line from a background thread,
// and on NFS / Lustre the file often ends in the middle of a line — or of a UTF-8 character — for
// seconds. Followed by `watch` and by the extension's run index, every group must be printed once,
// at its full size: never a partial group completed by idleness.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { tempDir } from './helpers.js';
import { RunIndex } from '../../src/logs/log-layer.js';
import { runWatch } from '../../src/cli/watch-command.js';

const N = 8;
const PROMPTS = ['Quelle est la dérivée de x²?', '求 1+2+…+10 的和', 'Combien font 7 × 8 ?', 'Résous x + 3 = 10 — détaillé'];

/** One verl step file's bytes: lines shuffled as `_balance_batch` leaves them (seeded). */
function stepFile(step: number): Buffer {
  const lines: string[] = [];
  PROMPTS.forEach((p, q) => {
    for (let i = 0; i < N; i++) lines.push(JSON.stringify({ input: p, output: `réponse ${i} « ${p} » \\boxed{${(i + q) % 3}} ✓`, gts: '1', score: i % 2, step, acc: i % 2 === 1 }));
  });
  let s = 7 + step;
  for (let i = lines.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [lines[i], lines[j]] = [lines[j], lines[i]];
  }
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}

/** Appends `bytes` to `file` in random-size chunks; `pauseAt` is a byte offset mid-line (and mid-character) where the writer stops for `pauseMs`. */
async function writeInChunks(file: string, bytes: Buffer, pauseAt: number, pauseMs: number): Promise<{ midLine: number; midChar: number }> {
  let pos = 0;
  let s = 99;
  let midLine = 0;
  let midChar = 0;
  writeFileSync(file, '');
  while (pos < bytes.length) {
    s = (s * 1103515245 + 12345) % 2147483648;
    let end = Math.min(bytes.length, pos + 1 + (s % 180));
    if (pos < pauseAt && end > pauseAt) end = pauseAt;
    appendFileSync(file, bytes.subarray(pos, end));
    pos = end;
    if (pos < bytes.length && bytes[pos - 1] !== 10) midLine++;
    if (pos < bytes.length && (bytes[pos] & 0xc0) === 0x80) midChar++;
    await new Promise((r) => setTimeout(r, pos === pauseAt ? pauseMs : 15));
  }
  return { midLine, midChar };
}

/** A byte offset in the middle of a multi-byte character, in the middle of a line, about halfway through. */
function midCharacterOffset(bytes: Buffer): number {
  for (let i = Math.floor(bytes.length / 2); i < bytes.length; i++) if ((bytes[i] & 0xc0) === 0x80 && bytes[i - 1] !== 10) return i;
  throw new Error('no multi-byte character');
}

test('watch: a writer pausing 3 s mid-line (mid-character) never makes a partial group; each group is printed once at full size', async () => {
  const { dir, cleanup } = tempDir();
  const ac = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const file = join(dir, 'rollout', '1.jsonl');
  try {
    writeFileSync(join(dir, '.keep'), '');
    mkdirSync(join(dir, 'rollout'));
    const done = runWatch([dir, '--idle-ms', '1000'], { stdin: new PassThrough(), stdout, stderr }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    const bytes = stepFile(1);
    const cut = midCharacterOffset(bytes);
    const stats = await writeInChunks(file, bytes, cut, 3000);
    assert.ok(stats.midLine > 5 && stats.midChar >= 1, JSON.stringify(stats));
    // a second step written whole: the usual size is known now, its groups complete by size
    appendFileSync(join(dir, 'rollout', '2.jsonl'), stepFile(2));
    const t0 = Date.now();
    while (out.trim().split('\n').filter(Boolean).length < 8 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1500)); // anything printed late would show now
    ac.abort();
    assert.equal(await done, 0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, 8, err);
    for (const l of lines) assert.equal(l.n, N, `group ${l.step} ${l.question_id} printed with ${l.n} roll-outs`);
    assert.equal(new Set(lines.map((l) => `${l.step} ${l.question_id}`)).size, 8, 'each group once');
    assert.doesNotMatch(err, /usual group size|printed again/);
  } finally {
    ac.abort();
    cleanup();
  }
});

test('run index (the extension): the same writer, polled, completes each group once with all its roll-outs', async () => {
  const { dir, cleanup } = tempDir();
  const notices: string[] = [];
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 1000, onNotice: (n) => notices.push(`${n.level}: ${n.message}`) });
  const completed: Array<[string, number]> = [];
  idx.onDidChange((e) => {
    for (const k of e.completed) completed.push([k, idx.group(k)!.n]);
    for (const k of e.changed) completed.push([k, -1]);
  });
  try {
    const bytes = stepFile(3);
    await writeInChunks(join(dir, '3.jsonl'), bytes, midCharacterOffset(bytes), 3000);
    const t0 = Date.now();
    while (completed.length < 4 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1200));
    await idx.settled();
    assert.equal(completed.length, 4, JSON.stringify(completed));
    for (const [, n] of completed) assert.equal(n, N);
    assert.equal(new Set(completed.map(([k]) => k)).size, 4);
    for (const e of idx.groups()) {
      const g = await idx.loadGroup(e.key);
      for (const r of g.rollouts) assert.ok(!r.response.includes('\uFFFD'), 'no character was split');
    }
    assert.ok(!notices.some((n) => /warning|error/.test(n)), notices.join('\n'));
  } finally {
    idx.close();
    cleanup();
  }
});

test('run index: a writer pausing 3 s between lines (usual size known) makes no partial group; the next step file completes the last one', async () => {
  const { dir, cleanup } = tempDir();
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 500, onNotice: () => undefined });
  const completed: Array<[number, number]> = [];
  idx.onDidChange((e) => {
    for (const k of e.completed) completed.push([idx.group(k)!.step, idx.group(k)!.n]);
  });
  try {
    writeFileSync(join(dir, '1.jsonl'), stepFile(1));
    const t0 = Date.now();
    while (completed.length < 4 && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(completed, [[1, N], [1, N], [1, N], [1, N]]);
    // step 2, line by line, with a pause at a line boundary half way
    const lines = stepFile(2).toString('utf8').split('\n').filter(Boolean);
    writeFileSync(join(dir, '2.jsonl'), '');
    for (let i = 0; i < lines.length; i++) {
      appendFileSync(join(dir, '2.jsonl'), lines[i] + '\n');
      await new Promise((r) => setTimeout(r, i === Math.floor(lines.length / 2) ? 3000 : 20));
    }
    // the last group of step 2 may still be open: step 3's file completes it
    writeFileSync(join(dir, '3.jsonl'), stepFile(3).subarray(0, 40)); // begins (mid-line)
    appendFileSync(join(dir, '3.jsonl'), stepFile(3).subarray(40));
    const t1 = Date.now();
    while (completed.filter(([s]) => s === 2).length < 4 && Date.now() - t1 < 8000) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(completed.filter(([s]) => s === 2), [[2, N], [2, N], [2, N], [2, N]]);
  } finally {
    idx.close();
    cleanup();
  }
});

test('run index: a finished file\'s smaller group completes after the ordinary idle period; one in a file written to lately waits longer', async () => {
  const { dir, cleanup } = tempDir();
  // Native roll-out records: two groups of N and one of N / 2 per file (N varies per question in
  // some runs). old.jsonl was last modified an hour ago (a finished run); fresh.jsonl just now.
  const lines = (step: number, sizes: number[]) =>
    sizes.flatMap((n, q) => Array.from({ length: n }, (_, i) => JSON.stringify({ step, question_id: `q${q}`, sample_idx: i, response: `so \\boxed{${i % 2}}` }))).join('\n') + '\n';
  writeFileSync(join(dir, 'old.jsonl'), lines(1, [N, N, N / 2]));
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(join(dir, 'old.jsonl'), hourAgo, hourAgo);
  writeFileSync(join(dir, 'fresh.jsonl'), lines(2, [N, N, N / 2]));
  const idx = await RunIndex.open(dir, { follow: true, poll: true, pollMs: 100, idleMs: 200, onNotice: () => undefined });
  const order: string[] = [];
  idx.onDidChange((e) => {
    for (const k of e.completed) if (idx.group(k)!.n === N / 2) order.push(`${idx.group(k)!.step}`);
  });
  try {
    const t0 = Date.now();
    while (order.length < 2 && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 50));
    // Both small groups were read at the same moment: the finished file's completes first.
    assert.deepEqual(order, ['1', '2']);
  } finally {
    idx.close();
    cleanup();
  }
});
