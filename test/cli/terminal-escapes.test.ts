// Escape sequences in log content (window-title OSC, SGR colours, C1 CSI, bidi controls) never
// reach the terminal raw: `score`, `report` and `health` text output and notices print them as
// visible, inert characters (src/logs/safe-text.ts). Through the built CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { safeText } from '../../src/logs/safe-text';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');
const ESC = '\u001b';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function run(): string {
  const dir = scratchDir(`cl-esc-${ESC}]0;dir\u0007-`);
  const lines: string[] = [];
  for (let s = 1; s <= 3; s++) {
    for (let q = 0; q < 3; q++) {
      lines.push(JSON.stringify({
        kind: 'group',
        step: s,
        question_id: `q${q}${ESC}]0;owned\u0007${ESC}[31m\u202e\u009b2J`,
        prompt: `P${ESC}[2J`,
        rollouts: ['12', '12', `\u202e21`, '7'].map((a, i) => ({ response: `so ${ESC}[31m \\boxed{${a}}`, mean_logprob: -0.1 * i })),
      }));
    }
  }
  lines.splice(2, 0, `{"a": ${ESC}]0;title\u0007 }`);
  const file = join(dir, 'run.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

test('safeText: C0, DEL, C1 and bidi controls become visible; text and newlines (multiline) stay', () => {
  assert.equal(safeText(`a${ESC}[31mb\u0007`), 'a\u241b[31mb\u2407');
  assert.equal(safeText('x\u009b2J\u202e1\u2066'), 'x<U+009B>2J<U+202E>1<U+2066>');
  assert.equal(safeText('l1\nl2\tz', true), 'l1\nl2\tz');
  assert.equal(safeText('l1\nl2'), 'l1\u240al2');
  assert.equal(safeText('plain — ünïcode ½'), 'plain — ünïcode ½');
});

test('score, report and health print log content without raw control characters', () => {
  const file = run();
  for (const cmd of ['score', 'report', 'health']) {
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), cmd, file, '--jobs', '0'], { encoding: 'utf8', timeout: 120_000 });
    // 3: a line was skipped (the malformed one), each named on stderr
    assert.equal(r.status, 3, r.stderr);
    assert.ok(!RAW.test(r.stderr), `${cmd} stderr: ${JSON.stringify(r.stderr)}`);
    if (cmd !== 'score') assert.ok(!RAW.test(r.stdout), `${cmd} stdout: ${JSON.stringify(r.stdout.slice(0, 500))}`);
    // the malformed line is still reported, its content visible and inert
    assert.match(r.stderr, /run\.jsonl:3: malformed JSON .*\u241b\]0;title\u2407/, cmd);
  }
});
