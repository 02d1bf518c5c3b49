// A worker thread that dies mid-run (pool.ts): `score` re-scores its groups on the main thread
// when the work holds no per-question state, and otherwise exits non-zero naming every group not
// scored; `serve` answers every request, with results or an error, and keeps serving. The thread
// is made to exit by the score worker's fault-injection variable. Through the built CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

function cli(args: string[], opts: { input?: string; exitAt?: number } = {}): { status: number | null; out: string; err: string } {
  const env = { ...process.env };
  if (opts.exitAt) env.CONSENSUS_LENS_TEST_WORKER_EXIT_AT = String(opts.exitAt);
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
