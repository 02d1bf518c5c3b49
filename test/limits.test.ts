// Hostile input to the worker-pool paths: deeply nested `extra`, groups above the size limit, a
// group that cannot be scored. Each is reported with its place in the log and skipped; every
// other group is still scored; `score` then exits non-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { boundDepth, EXTRA_TOO_DEEP, MAX_EXTRA_DEPTH } from '../src/logs/extra';
import { forEachGroup } from '../src/cli/for-each-group';
import { runServe } from '../src/cli/serve';
import type { Notice } from '../src/logs/log-layer';
import { scratchDir } from './scratch';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr, lines: r.stdout.trim() && args[0] !== 'report' ? r.stdout.trim().split('\n').map((l) => JSON.parse(l)) : [] };
}

const dir = scratchDir('cl-limits-');
const group = (q: string, n: number, extra?: string) =>
  `{"kind":"group","step":1,"question_id":"${q}","rollouts":[${Array.from({ length: n }, (_, i) => `{"response":"step ${i} so \\\\boxed{${i % 3}}","mean_logprob":-0.${i + 1}${extra ?? ''}}`).join(',')}]}`;
const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

test('extra nested 5,000 levels deep: score, report and sweep on worker threads see every group', () => {
  const file = join(dir, 'deep.jsonl');
  const lines = Array.from({ length: 12 }, (_, i) => group(`q${i}`, 4, i === 3 ? `,"extra":${deep(5000)}` : ''));
  writeFileSync(file, lines.join('\n') + '\n');
  const s = cli(['score', file, '--jobs', '2']);
  assert.equal(s.code, 0, s.err);
  assert.equal(s.lines.length, 12);
  const r = cli(['report', file, '--jobs', '2']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /12/);
  const w = cli(['sweep', file, '--jobs', '2', '--kappa', '0.1,0.5', '--operators', 'core']);
  assert.equal(w.code, 0, w.err);
  assert.deepEqual(w.lines.map((l) => l.groups), [12, 12]);
});

test('boundDepth keeps shallow values as they are and cuts what is deeper than the limit', () => {
  const shallow = { a: [1, { b: 'x' }], c: null };
  assert.equal(boundDepth(shallow), shallow);
  let v: unknown = 1;
  for (let i = 0; i < 10_000; i++) v = { a: v };
  const b = boundDepth(v) as Record<string, unknown>;
  let depth = 0;
  let x: unknown = b;
  while (typeof x === 'object' && x !== null) {
    x = (x as Record<string, unknown>).a;
    depth++;
  }
  assert.equal(depth, MAX_EXTRA_DEPTH);
  assert.equal(x, EXTRA_TOO_DEEP);
  assert.doesNotThrow(() => structuredClone(b));
  assert.deepEqual(boundDepth([[[1]]], 2), [[EXTRA_TOO_DEEP]]);
});

test('--max-group-size: a larger group is reported at its line and skipped, the others scored; score exits 1', () => {
  const file = join(dir, 'big.jsonl');
  writeFileSync(file, [group('small', 3), group('big', 9), group('also-small', 5)].join('\n') + '\n');
  for (const jobs of ['0', '2']) {
    const r = cli(['score', file, '--max-group-size', '5', '--jobs', jobs]);
    assert.equal(r.code, 1, r.err);
    assert.deepEqual(r.lines.map((l) => l.question_id), ['small', 'also-small']);
    assert.match(r.err, /big\.jsonl:2: step 1, question big: 9 roll-outs, more than the group size limit of 5/);
  }
  const many = join(dir, 'many.jsonl');
  writeFileSync(many, [...Array.from({ length: 10 }, (_, i) => group(`g${i}`, 3)), group('big', 7)].join('\n') + '\n');
  const r = cli(['score', many, '--max-group-size', '6', '--jobs', '2']);
  assert.equal(r.code, 1);
  assert.equal(r.lines.length, 10);
  const rep = cli(['report', many, '--max-group-size', '6', '--jobs', '2']);
  assert.equal(rep.code, 1);
  assert.match(rep.err, /question big: 7 roll-outs/);
  const sw = cli(['sweep', many, '--max-group-size', '6', '--kappa', '0.2']);
  assert.equal(sw.code, 1);
  assert.equal(sw.lines[0].groups, 10);
  assert.match(sw.err, /question big: 7 roll-outs/);
  assert.equal(cli(['score', many, '--max-group-size', '0']).code, 2);
  // Under the default limit (4096) the same run is scored whole.
  assert.equal(cli(['score', many]).lines.length, 11);
});

test('serve --max-group-size: a larger group is a request error, the worker keeps serving', async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
  const done = runServe(['--stdio', '--jobs', '0', '--max-group-size', '4'], { stdin, stdout, stderr: new PassThrough() });
  stdin.write(JSON.stringify({ id: 1, operator: 'majority', groups: [JSON.parse(group('big', 5))] }) + '\n');
  stdin.write(JSON.stringify({ id: 2, operator: 'majority', groups: [JSON.parse(group('ok', 4))] }) + '\n');
  stdin.end();
  assert.equal(await done, 0);
  const answers = Buffer.concat(chunks).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(answers[0].id, 1);
  assert.match(answers[0].error, /groups\[0\]: step 1, question big: 5 roll-outs, more than the group size limit of 4/);
  assert.equal(answers[1].results[0].question_id, 'ok');
});

test('a group that cannot be scored is reported (file and line) and the rest are scored', async () => {
  const file = join(dir, 'fail.jsonl');
  writeFileSync(file, [group('a', 3), group('boom', 3), group('c', 3)].join('\n') + '\n');
  const notices: Notice[] = [];
  const seen: string[] = [];
  await forEachGroup(
    file,
    (n) => notices.push(n),
    0,
    (g) => {
      if (g.questionId === 'boom') throw new RangeError('Maximum call stack size exceeded');
      return g.questionId;
    },
    () => ({ request: { kind: 'unused' } }),
    (v) => seen.push(v),
  );
  assert.deepEqual(seen, ['a', 'c']);
  const err = notices.find((n) => n.level === 'error');
  assert.ok(err, JSON.stringify(notices));
  assert.equal(err.line, 2);
  assert.match(err.message, /question boom: not scored: Maximum call stack/);
});

test('score exits 1 when an error-level notice was printed, after writing every group it could score', () => {
  const run = scratchDir('cl-limits-err-');
  writeFileSync(join(run, 'ok.jsonl'), group('fine', 3) + '\n');
  writeFileSync(join(run, 'notes.jsonl'), 'hello world\n');
  const r = cli(['score', run]);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines.map((l) => l.question_id), ['fine']);
  assert.match(r.err, /error: .*notes\.jsonl: unsupported file/);
  // sweep too: its totals then cover only part of the run.
  const sw = cli(['sweep', run, '--kappa', '0.5,1', '--operators', 'core']);
  assert.equal(sw.code, 1);
  assert.equal(sw.lines.length, 2);
  assert.match(sw.err, /error: .*notes\.jsonl: unsupported file/);
  // A skipped line (malformed) exits 3 with a summary line; --allow-skipped accepts it.
  writeFileSync(join(run, 'notes.jsonl'), group('more', 3) + '\n{broken\n');
  const skipped = cli(['score', run]);
  assert.equal(skipped.code, 3);
  assert.match(skipped.err, /1 of 3 lines skipped/);
  assert.equal(cli(['score', run, '--allow-skipped']).code, 0);
  assert.equal(cli(['sweep', run, '--kappa', '0.5,1', '--operators', 'core']).code, 3);
  assert.equal(cli(['sweep', run, '--kappa', '0.5,1', '--operators', 'core', '--allow-skipped']).code, 0);
});
