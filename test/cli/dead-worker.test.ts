// A worker thread that dies mid-run (src/util/worker-pool.ts): `score` re-scores its groups on the main thread
// when the work holds no per-question state, and otherwise exits non-zero naming every group not
// scored; `serve` answers every request, with results or an error, and keeps serving. The thread
// is made to exit by the score worker's fault-injection variable. Through the built CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

function cli(args: string[], opts: { input?: string; exitAt?: number; exitOn?: string } = {}): { status: number | null; out: string; err: string } {
  const env = { ...process.env };
  if (opts.exitAt) env.CONSENSUS_LENS_TEST_WORKER_EXIT_AT = String(opts.exitAt);
  if (opts.exitOn) env.CONSENSUS_LENS_TEST_WORKER_EXIT_ON = opts.exitOn;
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', input: opts.input, env, timeout: 120_000, maxBuffer: 1 << 26 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function group(step: number, q: number, n = 8): Record<string, unknown> {
  return {
    kind: 'group',
    step,
    question_id: `q${q}`,
    rollouts: Array.from({ length: n }, (_, i) => ({ response: `step ${step} we reason ${i} times \\boxed{${(i + q) % 3}}`, mean_logprob: -0.1 * ((i * 7) % 5) - 0.05 })),
  };
}

/** 60 groups: 20 questions over 3 steps. */
function runFile(): string {
  const dir = scratchDir('cl-dead-');
  const file = join(dir, 'run.jsonl');
  const lines: string[] = [];
  for (let step = 1; step <= 3; step++) for (let q = 0; q < 20; q++) lines.push(JSON.stringify(group(step, q)));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

test('score --jobs 2, stateless work: a dead thread\'s groups are re-scored, the output equals --jobs 0', { timeout: 150_000 }, () => {
  const file = runFile();
  for (const ops of ['majority,cisc', 'majority,core']) {
    const ref = cli(['score', file, '--jobs', '0', '--operators', ops]);
    assert.equal(ref.status, 0, ref.err);
    const r = cli(['score', file, '--jobs', '2', '--operators', ops], { exitAt: 3 });
    assert.equal(r.status, 0, r.err);
    assert.equal(r.out.trim().split('\n').length, 60);
    assert.equal(r.out, ref.out, ops);
    assert.match(r.err, /warning: worker thread 1 exited \(code 70\); the groups it held are scored again on the main thread/);
  }
});

test('score --jobs 2 with MS-TTRL: a dead thread fails the run and names every group not scored', { timeout: 150_000 }, () => {
  const file = runFile();
  const r = cli(['score', file, '--jobs', '2', '--operators', 'majority,msttrl'], { exitAt: 3 });
  assert.equal(r.status, 1, r.err);
  const written = r.out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { step: number; question_id: string });
  const named = r.err.split('\n').filter((l) => /^consensus-lens: error: .*not scored/.test(l));
  assert.ok(named.length > 0, r.err);
  assert.equal(written.length + named.length, 60, r.err);
  for (const l of named) assert.match(l, /run\.jsonl:\d+: step \d, question q\d+: not scored: .*worker thread/);
  // no group both written and named
  const keys = new Set(written.map((w) => `step ${w.step}, question ${w.question_id}:`));
  for (const l of named) assert.ok(![...keys].some((k) => l.includes(k)), l);
});

test('serve --jobs 2: the request whose thread died gets an error; every other request its results', { timeout: 150_000 }, () => {
  const reqs = Array.from({ length: 6 }, (_, k) => JSON.stringify({ id: k, operator: 'majority', groups: Array.from({ length: 6 }, (_, q) => group(k + 1, q)) }));
  const r = cli(['serve', '--stdio', '--jobs', '2'], { input: reqs.join('\n') + '\n', exitAt: 2 });
  assert.equal(r.status, 0, r.err);
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l) as { id: number; error?: string; results?: unknown[] });
  assert.deepEqual(answers.map((a) => a.id), [0, 1, 2, 3, 4, 5]);
  const failed = answers.filter((a) => a.error);
  assert.ok(failed.length >= 1 && failed.length < 6, JSON.stringify(answers.map((a) => a.error ?? 'ok')));
  for (const a of failed) assert.match(a.error!, /not scored: worker thread \d+ exited/);
  assert.ok(answers.at(-1)!.results, 'the last request is scored after the restart');
});

test('serve --request-timeout: a request over the bound gets an error, the next is scored', { timeout: 150_000 }, () => {
  const big = { id: 'big', operator: 'core', groups: [group(1, 0, 3000)] };
  const small = { id: 'small', operator: 'majority', groups: [group(1, 1)] };
  const r = cli(['serve', '--stdio', '--jobs', '1', '--request-timeout', '0.02'], { input: `${JSON.stringify(big)}\n` });
  assert.equal(r.status, 0, r.err);
  const a = JSON.parse(r.out.trim()) as { id: string; error?: string };
  assert.equal(a.id, 'big');
  assert.match(a.error ?? '', /not scored within 0.02 s/);
  const r2 = cli(['serve', '--stdio', '--jobs', '1', '--request-timeout', '60'], { input: `${JSON.stringify(big)}\n${JSON.stringify(small)}\n` });
  const b = r2.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; results?: unknown[] });
  assert.deepEqual(b.map((x) => [x.id, !!x.results]), [['big', true], ['small', true]]);
});

// Restarts are counted in a window of work: a thread that dies now and then over a long run is
// restarted every time; one that cannot be restarted ends the process (status 75), which a
// client treats as a dead worker, instead of a process that refuses every later request.
const dying = (k: number) => JSON.stringify({ id: `die${k}`, operator: 'majority', groups: [{ ...group(1, 0), question_id: 'die' }] });
const small = (k: number) => JSON.stringify({ id: `ok${k}`, operator: 'majority', groups: [group(1, k % 20)] });

test('serve: threads dying now and then over many requests are restarted every time', { timeout: 150_000 }, () => {
  const lines: string[] = [];
  for (let d = 0; d < 10; d++) {
    lines.push(dying(d));
    for (let k = 0; k < 70; k++) lines.push(small(d * 100 + k));
  }
  const r = cli(['serve', '--stdio', '--jobs', '1'], { input: lines.join('\n') + '\n', exitOn: 'die' });
  assert.equal(r.status, 0, r.err.slice(-2000));
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; error?: string; results?: unknown[] });
  assert.equal(answers.length, lines.length);
  for (const a of answers.filter((x) => x.id.startsWith('die'))) assert.match(a.error ?? '', /not scored: worker thread 1 exited/);
  // the requests after the last death are scored (before: refused once 8 restarts were spent)
  const tail = answers.slice(-60);
  assert.ok(tail.every((a) => a.results), JSON.stringify(tail.filter((a) => a.error).slice(0, 3)));
});

test('serve: a thread that cannot be restarted ends the process with status 75, not a process refusing everything', { timeout: 150_000 }, () => {
  const lines = Array.from({ length: 48 }, (_, k) => dying(k)); // a death fails the requests queued on its thread too
  lines.push(small(1));
  const r = cli(['serve', '--stdio', '--jobs', '2'], { input: lines.join('\n') + '\n', exitOn: 'die' });
  assert.equal(r.status, 75, r.err.slice(-2000));
  assert.match(r.err, /consensus-lens serve: worker thread \d+ exited \(code 70\), and threads died more than 8 times in the last 64 groups sent; exiting \(status 75\)/);
  const answers = r.out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; error?: string });
  assert.ok(answers.length < lines.length, `${answers.length} answers`);
  for (const a of answers) assert.match(a.error ?? '', /not scored: worker thread/);
});

test('serve: a request line over the size limit gets an error answer; the next request is scored', { timeout: 150_000 }, async () => {
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js'), 'serve', '--stdio', '--jobs', '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  const chunk = Buffer.alloc(1 << 20, 'x'.charCodeAt(0));
  const write = (b: Buffer | string) => new Promise<void>((resolve) => (child.stdin.write(b) ? resolve() : child.stdin.once('drain', () => resolve())));
  for (let k = 0; k < 257; k++) await write(chunk); // 257 MiB, over the 256 MiB limit
  await write(`\n${small(3)}\n`);
  child.stdin.end();
  const status = await done;
  assert.equal(status, 0, err.slice(-2000));
  const answers = out.trim().split('\n').map((l) => JSON.parse(l) as { id?: string; error?: string; results?: unknown[] });
  assert.equal(answers.length, 2, out.slice(0, 500));
  assert.match(answers[0].error ?? '', /^request 1: a request line of 269,484,032 bytes, over the 256 MiB request-size limit \(not read\)$/);
  assert.equal(answers[1].id, 'ok3');
  assert.ok(answers[1].results);
});
