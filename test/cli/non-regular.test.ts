// A run named on the command line that is not a regular file or folder (a FIFO here) is refused
// at the door: reading it would block forever (docs/log-formats.md, "Bounds"). Through the built CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');

test('score, compare, report and sweep refuse a FIFO named as the run, at once', { skip: process.platform === 'win32' }, () => {
  const dir = scratchDir('cl-fifo-');
  const fifo = join(dir, 'run.jsonl');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const ok = join(dir, 'ok.jsonl');
  writeFileSync(ok, `${JSON.stringify({ kind: 'group', step: 1, question_id: 'q', rollouts: [{ response: '\\boxed{1}' }, { response: '\\boxed{2}' }] })}\n`);
  for (const args of [['score', fifo], ['compare', ok, fifo], ['compare', fifo, ok], ['report', fifo], ['sweep', fifo, '--kappa', '0,1']]) {
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 1, `${args[0]}: status ${r.status} (${r.signal ?? ''}) ${r.stderr}`);
    assert.match(r.stderr, /run\.jsonl is not a regular file or folder \(a FIFO, socket or device\); not read/, args.join(' '));
  }
});
