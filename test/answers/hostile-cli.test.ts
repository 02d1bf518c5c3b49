// The answers that once hung or exhausted memory, through the surfaces that score them: `score`
// (in-process and on worker threads) and `serve` (built dist/cli.js). Every group gets its line,
// within the test's timeout (a hang or an OOM fails it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOSTILE_ANSWERS } from './hostile-answers';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

function groups(): Array<Record<string, unknown>> {
  return Object.entries(HOSTILE_ANSWERS).map(([name, ans], q) => ({
    kind: 'group',
    step: 1,
    question_id: name,
    rollouts: [ans, ans, '12', '12', '\\boxed{\u202e12}'.slice(7, -1), `${ans}+1`].map((a, i) => ({ response: `we get \\boxed{${a}}`, mean_logprob: -0.1 * (i + q) })),
  }));
}

function cli(args: string[], input?: string): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', input, timeout: 120_000, maxBuffer: 1 << 26 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

for (const jobs of ['0', '2']) {
  test(`score --jobs ${jobs}: every hostile group is scored, the bidi-wrapped 12 joins the 12s`, { timeout: 150_000 }, () => {
    const dir = scratchDir('cl-hostile-');
    const file = join(dir, 'run.jsonl');
    // enough groups for the worker threads to start
    const all = [...groups(), ...groups().map((g) => ({ ...g, step: 2 }))];
    writeFileSync(file, all.map((g) => JSON.stringify(g)).join('\n') + '\n');
    const r = cli(['score', file, '--jobs', jobs, '--operators', 'majority,core']);
    assert.equal(r.status, 0, r.err);
    const lines = r.out.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, all.length);
    for (const l of lines) assert.equal(l.results.majority.label, '12', JSON.stringify(l.results.majority));
  });
}

test('serve: a request of hostile groups is answered, and the next request too', { timeout: 150_000 }, () => {
  const req = (id: string) => JSON.stringify({ id, operator: 'majority', groups: groups() });
  const r = cli(['serve', '--stdio', '--jobs', '1'], [req('a'), req('b')].join('\n') + '\n');
  assert.equal(r.status, 0, r.err);
  const answers = r.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(answers.map((a) => a.id), ['a', 'b']);
  for (const a of answers) {
    assert.equal(a.results.length, Object.keys(HOSTILE_ANSWERS).length, JSON.stringify(a));
    for (const g of a.results) assert.equal(g.label, '12');
  }
});
