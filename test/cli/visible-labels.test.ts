// Labels and question ids shown by the CLI's text output go through the one visible-controls
// mapping (src/logs/safe-text.ts): a bidi override in an answer prints as <U+202E>, never
// reorders what follows ("\u202e12" would read "21"). Through the built CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../scratch';

const ROOT = join(import.meta.dirname, '..', '..');
const CONTROLS = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069]/;

function runOf(dir: string, answers: string[]): string {
  mkdirSync(dir, { recursive: true });
  const rows = [1, 2].map((step) => JSON.stringify({ kind: 'group', step, question_id: 'q\u202e1', ground_truth: '5', rollouts: answers.map((a) => ({ response: `so \\boxed{${a}}` })) }));
  writeFileSync(join(dir, 'run.jsonl'), rows.join('\n') + '\n');
  return dir;
}

test('compare and report print bidi controls in labels and question ids visibly', () => {
  const root = scratchDir('cl-bidi-');
  const a = runOf(join(root, 'a'), ['\u202e12', '\u202e12', '7']);
  const b = runOf(join(root, 'b'), ['7', '7', '\u202e12']);
  const cmp = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'compare', a, b], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(cmp.status, 0, cmp.stderr);
  assert.doesNotMatch(cmp.stdout, CONTROLS, cmp.stdout);
  assert.match(cmp.stdout, /A "<U\+202E>12"\s+B "7"/, cmp.stdout);
  const rep = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'report', a, '--no-cache'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(rep.status, 0, rep.stderr);
  assert.doesNotMatch(rep.stdout, CONTROLS);
});
