// The line-length limit (lines.ts, MAX_LINE_BYTES): a sparse file whose second line is a 1 GiB
// hole is reported and skipped by `score` and by the run index, in bounded memory; the lines
// around it are read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { readRawLineBatches } from '../../src/logs/lines';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');
const GIB = 1 << 30;

function rec(q: string): string {
  // longer than the 64 KB a reader probes to tell text from binary, so the hole is not probed
  const pad = 'we think step by step. '.repeat(1200);
  return JSON.stringify({ kind: 'group', step: 1, question_id: q, rollouts: [1, 2, 2].map((a) => ({ response: `${pad} so \\boxed{${a}}` })) });
}

/** line 1: a group; line 2: 1 GiB of NUL bytes (a hole: 4 KB on disk); line 3: a group. */
function sparseRun(): string {
  const dir = scratchDir('cl-sparse-');
  const file = join(dir, 'run.jsonl');
  const fd = openSync(file, 'w');
  const first = Buffer.from(rec('q1') + '\n');
  writeSync(fd, first, 0, first.length, 0);
  const last = Buffer.from('\n' + rec('q3') + '\n');
  writeSync(fd, last, 0, last.length, first.length + GIB);
  closeSync(fd);
  return file;
}

function child(code: string): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

test('the line reader yields an over-long line as tooLong, with its true length, holding none of it', async () => {
  const chunks = [Buffer.from('ab\n'), Buffer.alloc(100, 120), Buffer.from('\ncd\n')];
  const all = Buffer.concat(chunks);
  const fh = { read: async (b: Buffer, o: number, len: number, pos: number) => ({ bytesRead: all.copy(b, o, pos, Math.min(all.length, pos + len)) }) };
  const lines = [];
  for await (const batch of readRawLineBatches(fh, 0, 1, all.length, 16, 40)) for (const l of batch) lines.push({ line: l.line, len: l.length, tooLong: !!l.tooLong, text: l.tooLong ? '' : l.bytes.toString() });
  assert.deepEqual(lines, [
    { line: 1, len: 2, tooLong: false, text: 'ab' },
    { line: 2, len: 100, tooLong: true, text: '' },
    { line: 3, len: 2, tooLong: false, text: 'cd' },
  ]);
});

test('score: a 1 GiB line is reported with its place; the other groups are scored; memory stays bounded', { timeout: 150_000 }, () => {
  const file = sparseRun();
  const r = child(`
    const { runScore } = require('./src/cli/score-command.ts');
    const { PassThrough } = require('node:stream');
    const out = new PassThrough(); const err = new PassThrough(); let o = '', e = '';
    out.on('data', (c) => (o += c)); err.on('data', (c) => (e += c));
    runScore([${JSON.stringify(file)}, '--jobs', '0', '--operators', 'majority'], { stdin: new PassThrough(), stdout: out, stderr: err }).then((code) => {
      console.log(JSON.stringify({ code, out: o, err: e, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
    });`);
  assert.equal(r.status, 0, r.err.slice(-2000));
  const res = JSON.parse(r.out.trim().split('\n').pop()!) as { code: number; out: string; err: string; maxRssMb: number };
  assert.deepEqual(res.out.trim().split('\n').map((l) => JSON.parse(l).question_id), ['q1', 'q3']);
  assert.match(res.err, /run\.jsonl:2: a line of 1,073,741,824 bytes, over the 256 MiB line-length limit/);
  assert.ok(res.maxRssMb < 700, `peak RSS ${res.maxRssMb} MB`);
});

test('the run index (the extension\'s reader) reports the line and indexes the others, in bounded memory', { timeout: 150_000 }, () => {
  const file = sparseRun();
  const r = child(`
    const { RunIndex } = require('./src/logs/log-layer.ts');
    (async () => {
      const notices = [];
      const idx = await RunIndex.open(${JSON.stringify(file)}, { follow: false, onNotice: (n) => notices.push(n.message) });
      console.log(JSON.stringify({ groups: idx.groups().map((g) => g.questionId), notices, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
      process.exit(0);
    })();`);
  assert.equal(r.status, 0, r.err.slice(-2000));
  const res = JSON.parse(r.out.trim().split('\n').pop()!) as { groups: string[]; notices: string[]; maxRssMb: number };
  assert.deepEqual(res.groups.sort(), ['q1', 'q3']);
  assert.ok(res.notices.some((n) => /:2: a line of 1,073,741,824 bytes, over the 256 MiB line-length limit/.test(n)), JSON.stringify(res.notices));
  assert.ok(res.maxRssMb < 700, `peak RSS ${res.maxRssMb} MB`);
});
