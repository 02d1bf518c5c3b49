// Which workspace folders are runs: outermost only, TRL's completions/ folder lifts to its parent,
// and a folder reached through a symbolic link out of the workspace is never a workspace run.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inFollowedRun, runFolders } from '../../src/extension/runs/discover';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const group = JSON.stringify({ kind: 'group', step: 1, question_id: 'q', rollouts: [{ response: '\\boxed{1}' }] }) + '\n';

test('run folders: outermost, TRL completions lifted, other JSONL ignored, symlinks out of the workspace not followed', async () => {
  const base = mkdtempSync(join(tmpdir(), 'cl-discover-'));
  dirs.push(base);
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  for (const d of ['run-a/sub', 'run-b', 'trl/completions', 'notes', 'inner']) mkdirSync(join(ws, d), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(ws, 'run-a/s.jsonl'), group);
  writeFileSync(join(ws, 'run-a/sub/s.jsonl'), group);
  writeFileSync(join(ws, 'run-b/s.jsonl'), group);
  writeFileSync(join(ws, 'trl/completions/completions_00001.parquet'), 'PAR1');
  writeFileSync(join(ws, 'notes/other.jsonl'), JSON.stringify({ hello: 'world' }) + '\n');
  writeFileSync(join(outside, 's.jsonl'), group);
  symlinkSync(outside, join(ws, 'linked'));
  // A link to a folder inside the workspace stays inside it.
  symlinkSync(join(ws, 'run-b'), join(ws, 'inner/alias'));
  const files = ['run-a/s.jsonl', 'run-a/sub/s.jsonl', 'run-b/s.jsonl', 'trl/completions/completions_00001.parquet', 'notes/other.jsonl', 'linked/s.jsonl', 'inner/alias/s.jsonl'].map((f) => join(ws, f));
  const found = await runFolders(files, [ws]);
  assert.deepEqual(found.sort(), [join(ws, 'inner/alias'), join(ws, 'run-a'), join(ws, 'run-b'), join(ws, 'trl')].sort());
  assert.ok(!found.includes(join(ws, 'linked')));
  assert.ok(inFollowedRun(join(ws, 'run-a/new/x.jsonl'), [join(ws, 'run-a')]));
  assert.ok(!inFollowedRun(join(ws, 'run-ab/x.jsonl'), [join(ws, 'run-a')]));
});

test('run folders: miles trajectory folders are runs; prime-rl and SkyRL per-step folders lift to the folder above them, one run for every step', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'cl-discover-'));
  dirs.push(ws);
  const prime = JSON.stringify({ example_id: 0, prompt: [], completion: [{ role: 'assistant', content: '1' }], reward: 1 }) + '\n';
  const sky = JSON.stringify({ input_prompt: 'q', output_response: '\\boxed{1}', score: 1 }) + '\n';
  const files: string[] = [];
  for (const [rel, body] of [
    ['out/rollouts/step_1/train_rollouts.jsonl', prime],
    ['out/rollouts/step_2/train_rollouts.jsonl', prime],
    ['exp/dumped_evals/global_step_5_evals/aime.jsonl', sky],
    ['exp/dumped_evals/eval_only/aime.jsonl', sky],
    ['dump/trajectory/0.jsonl', JSON.stringify({ sample_index: 0, group_index: 0, reward: 1, prompt: 'q', messages: [] }) + '\n'],
  ]) {
    mkdirSync(join(ws, rel, '..'), { recursive: true });
    writeFileSync(join(ws, rel), body);
    files.push(join(ws, rel));
  }
  assert.deepEqual((await runFolders(files, [ws])).sort(), [join(ws, 'dump/trajectory'), join(ws, 'exp/dumped_evals'), join(ws, 'out/rollouts')]);
});
