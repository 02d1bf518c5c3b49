// `watch` as a script sees it: it waits for a run folder that does not exist yet, prints the groups
// written there, and exits 130 on SIGINT (Ctrl-C).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

test('watch waits for a folder that does not exist yet, follows it, and exits 130 on SIGINT', async () => {
  const base = mkdtempSync(join(tmpdir(), 'cl-watch-'));
  try {
    const run = join(base, 'later');
    const child = spawn(process.execPath, ['dist/cli.js', 'watch', run, '--poll-ms', '100', '--operators', 'majority'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const until = async (cond: () => boolean, what: string) => {
      for (let t = 0; t < 300 && !cond(); t++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(cond(), `${what}; stderr: ${err}`);
    };
    await until(() => /does not exist yet: waiting for it/.test(err), 'a waiting notice');
    mkdirSync(run);
    const group = { kind: 'group', step: 0, question_id: 'q', rollouts: ['1', '1', '2'].map((a) => ({ response: `so \\boxed{${a}}` })) };
    writeFileSync(join(run, 'step_0.jsonl'), JSON.stringify(group) + '\n');
    await until(() => out.includes('"question_id":"q"'), 'the group printed');
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGINT');
    });
    assert.equal(code, 130);
    assert.doesNotMatch(err, /ENOENT|undefined/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
