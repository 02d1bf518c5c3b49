// Hostile parquet files: declared counts checked before anything is allocated, parsing in a
// bounded worker thread; the host's reader (RunIndex, what the extension's run store opens)
// reports a clear error and keeps going.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { craftParquet, rleRun } from './parquet-craft.js';
import { checkParquet } from '../../src/logs/parquet.js';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

function run(files: Record<string, Uint8Array>): string {
  const dir = scratchDir('cl-pq-');
  mkdirSync(join(dir, 'completions'));
  for (const [name, b] of Object.entries(files)) writeFileSync(join(dir, 'completions', name), b);
  return dir;
}

/** RunIndex.open in a child whose own heap is small: a parse on its thread would abort it. */
function openInChild(dir: string): { status: number | null; out: string; err: string } {
  const script = `
    const { RunIndex } = require(${JSON.stringify(join(ROOT, 'src/logs/log-layer.ts'))});
    (async () => {
      const notices = [];
      const idx = await RunIndex.open(${JSON.stringify(dir)}, { follow: false, onNotice: (n) => notices.push(n.level + ': ' + n.message) });
      console.log(JSON.stringify({ groups: idx.groups().length, notices }));
      process.exit(0);
    })().catch((e) => { console.error('REJECTED ' + e.message); process.exit(3); });`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=200', '--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const good = craftParquet([{ name: 'prompt', values: ['q1', 'q1'] }, { name: 'completion', values: ['\\boxed{1}', '\\boxed{2}'] }], 2);
// a page declaring 10^8 values, all null, in one RLE run of its definition levels
const huge = craftParquet(
  [
    { name: 'prompt', values: [], numValues: 1e8, levels: rleRun(1e8, 0) },
    { name: 'completion', values: [], numValues: 1e8, levels: rleRun(1e8, 0) },
  ],
  1e8,
);
// the same run in a page that declares 2 values (the decoder's output array would grow to 10^8)
const overrun = craftParquet(
  [
    { name: 'prompt', values: ['q', 'q'], levels: rleRun(1e8, 1) },
    { name: 'completion', values: ['a', 'b'], levels: rleRun(1e8, 1) },
  ],
  2,
);
const pastEof = craftParquet([{ name: 'prompt', values: ['q', 'q'] }, { name: 'completion', values: ['a', 'b'], offsetShift: 10_000 }], 2);

test('the crafted files are what the tests say (a few hundred bytes)', () => {
  assert.ok(huge.length < 300, `${huge.length} bytes`);
  assert.doesNotThrow(() => checkParquet(good.buffer.slice(0) as ArrayBuffer));
});

test('checkParquet: declared counts against the bytes and the bounds, before any allocation', () => {
  assert.throws(() => checkParquet(huge.buffer.slice(0) as ArrayBuffer), /declares 100000000 rows/);
  assert.throws(() => checkParquet(overrun.buffer.slice(0) as ArrayBuffer), /RLE run of 100000000 values passes the page's 2 declared values/);
  assert.throws(() => checkParquet(pastEof.buffer.slice(0) as ArrayBuffer), /column completion: its chunk .* is outside the file/);
});

test('the host reader reports a 10^8-value parquet file as an error, reads the good file, and does not crash', () => {
  const dir = run({ 'completions_00001.parquet': good, 'completions_00002.parquet': huge, 'completions_00003.parquet': overrun, 'completions_00004.parquet': pastEof });
  const r = openInChild(dir);
  assert.equal(r.status, 0, `child exited ${r.status}: ${r.err.slice(-2000)}`);
  const res = JSON.parse(r.out.trim().split('\n').pop()!) as { groups: number; notices: string[] };
  assert.equal(res.groups, 1, JSON.stringify(res));
  for (const n of ['00002', '00003', '00004']) {
    const hit = res.notices.find((m) => m.includes(`completions_${n}.parquet`));
    assert.ok(hit && /^error: .*invalid parquet/.test(hit), `${n}: ${JSON.stringify(res.notices)}`);
  }
});

// Decoded size: a one-entry dictionary referenced by one RLE run stands for entry × rows bytes.
const BIG = `${'x'.repeat(30_000)} \\boxed{1}`;
function dictFile(rows: number, completion: string): Uint8Array {
  return craftParquet(
    [
      { name: 'prompt', values: [], numValues: rows, levels: rleRun(rows, 1), dictionary: { entries: ['q'], indices: rleRun(rows, 0) } },
      { name: 'completion', values: [], numValues: rows, levels: rleRun(rows, 1), dictionary: { entries: [completion], indices: rleRun(rows, 0) } },
    ],
    rows,
  );
}
// 2^20 rows of one 30 KB text: 31 GB once decoded, in 30 KB of file
const textBomb = dictFile(1 << 20, BIG);
// 2^17 rows (their objects within any budget) of one 30 KB text: 3.9 GB in one column chunk
const columnBomb = dictFile(1 << 17, BIG);
// 2^20 rows of one short text: the rows' own objects pass the budget
const rowBomb = dictFile(1 << 20, '\\boxed{1}');
// a dictionary file as a writer makes it: read
const dictGood = dictFile(4, BIG);

test('checkParquet bounds the decoded size: dictionary entry × references, per column chunk and per file', () => {
  assert.ok(textBomb.length < 40_000 && rowBomb.length < 400, `${textBomb.length}, ${rowBomb.length} bytes`);
  assert.doesNotThrow(() => checkParquet(dictGood.buffer.slice(0) as ArrayBuffer));
  assert.throws(() => checkParquet(columnBomb.buffer.slice(0) as ArrayBuffer), /column completion decodes to more than 3,75\d MB, over the \d+ MB decode budget/);
  assert.throws(() => checkParquet(rowBomb.buffer.slice(0) as ArrayBuffer), /1,048,576 rows .* decodes to more than 1,024 MB, over the \d+ MB decode budget/);
  assert.throws(() => checkParquet(textBomb.buffer.slice(0) as ArrayBuffer), /decode budget/);
});

test('score refuses decode bombs at the door, naming the file, in seconds', () => {
  const dir = run({
    'completions_00001.parquet': dictGood,
    'completions_00002.parquet': textBomb,
    'completions_00003.parquet': columnBomb,
    'completions_00004.parquet': rowBomb,
  });
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['dist/cli.js', 'score', dir, '--operators', 'majority', '--no-cache', '--jobs', '0'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  const ms = Date.now() - t0;
  assert.ok(ms < 30_000, `score took ${ms} ms`);
  for (const n of ['00002', '00003', '00004']) {
    assert.match(r.stderr, new RegExp(`completions_${n}\\.parquet.*decode budget`), r.stderr.slice(-3000));
  }
  // the good file's group was scored
  const scored = r.stdout.split('\n').filter((l) => l.includes('"question_id"'));
  assert.equal(scored.length, 1, r.stdout.slice(-2000));
});

test('the host reader reports decode bombs as errors naming the file, and reads the good file', () => {
  const dir = run({ 'completions_00001.parquet': dictGood, 'completions_00002.parquet': textBomb, 'completions_00003.parquet': rowBomb });
  const r = openInChild(dir);
  assert.equal(r.status, 0, `child exited ${r.status}: ${r.err.slice(-2000)}`);
  const res = JSON.parse(r.out.trim().split('\n').pop()!) as { groups: number; notices: string[] };
  assert.equal(res.groups, 1, JSON.stringify(res));
  for (const n of ['00002', '00003']) {
    const hit = res.notices.find((m) => m.includes(`completions_${n}.parquet`));
    assert.ok(hit && /^error: .*decode budget/.test(hit), `${n}: ${JSON.stringify(res.notices)}`);
  }
});
