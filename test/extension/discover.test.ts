// Which workspace folders are runs: outermost only, TRL's completions/ folder lifts to its parent,
// and a folder reached through a symbolic link out of the workspace is never a workspace run.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, matchesGlob, relative } from 'node:path';
import { CANDIDATE_GLOB, inFollowedRun, runFolders } from '../../src/extension/runs/discover';
import { whyNotALog, whyNotARun } from '../../src/extension/runs/recognise';
import { UNSUPPORTED_HINT } from '../../src/logs/parse';

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

test('the workspace scan lists a run for every file name the extension activates on (package.json workspaceContains)', async () => {
  // The patterns come from package.json, so a format added to the activation events without the
  // scan finding it fails here. Each pattern needs a log of its format among the real writers'
  // fixtures (test/fixtures/logs/writers) or the native step files made below.
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { activationEvents: string[] };
  const patterns = pkg.activationEvents.filter((e) => e.startsWith('workspaceContains:')).map((e) => e.slice('workspaceContains:'.length));
  assert.ok(patterns.length >= 5, patterns.join(', '));
  const base = mkdtempSync(join(tmpdir(), 'cl-activation-'));
  dirs.push(base);
  const ws = join(base, 'ws');
  cpSync('test/fixtures/logs/writers', ws, { recursive: true });
  for (const f of ['native-a/step_1.jsonl', 'native-b/step-1.jsonl']) {
    mkdirSync(join(ws, dirname(f)), { recursive: true });
    writeFileSync(join(ws, f), group);
  }
  const files = listFiles(ws);
  const found = await runFolders(files, [ws]);
  for (const pattern of patterns) {
    const matching = files.filter((f) => matchesGlob(relative(ws, f), pattern));
    assert.ok(matching.length > 0, `no fixture log matches ${pattern}`);
    for (const f of matching) {
      // The scan's file search finds it, and the scan makes a run of it.
      assert.ok(matchesGlob(relative(ws, f), CANDIDATE_GLOB), `${pattern}: ${relative(ws, f)} is not searched for (${CANDIDATE_GLOB})`);
      assert.ok(inFollowedRun(f, found), `${pattern}: ${relative(ws, f)} is in none of the runs found: ${found.map((d) => relative(ws, d)).join(', ')}`);
    }
  }
  // NeMo RL's folder and the W&B run folder (the one holding files/) are runs of their own.
  assert.ok(found.includes(join(ws, 'nemo-rl/logs/exp_001')), found.join(', '));
  assert.ok(found.includes(join(ws, 'wandb-trl/wandb/offline-run-20250101_000000-abc123')), found.join(', '));
  assert.ok(found.includes(join(ws, 'trl-1x-pandas2')), found.join(', '));
});

test('whyNotARun: a file that is not a log is refused with the reader\u2019s reason; a log, a folder, a path not there yet are not', async () => {
  const base = mkdtempSync(join(tmpdir(), 'cl-notarun-'));
  dirs.push(base);
  const notes = join(base, 'notes.jsonl');
  writeFileSync(notes, JSON.stringify({ hello: 'world' }) + '\n' + JSON.stringify({ a: 1 }) + '\n');
  assert.equal(await whyNotARun(notes), `${notes}: unsupported file (${UNSUPPORTED_HINT})`);
  const binary = join(base, 'weights.jsonl');
  writeFileSync(binary, Buffer.from([0x7b, 0, 1, 2, 3, 0x7d, 10]));
  assert.equal(await whyNotARun(binary), `${binary}: unsupported file (not a text file)`);
  const log = join(base, 'log.jsonl');
  writeFileSync(log, group);
  assert.equal(await whyNotARun(log), null);
  assert.equal(await whyNotARun(base), null);
  assert.equal(await whyNotARun(join(base, 'job-not-started-yet')), null);
  // An empty file is a log not written yet (a live run is opened before its first group): followed.
  const empty = join(base, 'live.jsonl');
  writeFileSync(empty, '');
  assert.equal(await whyNotARun(empty), null);
  assert.match((await whyNotALog(empty)) ?? '', /empty file, no records/);
  // The scan asks the same of each candidate: a missing file is not a log.
  assert.match((await whyNotALog(join(base, 'gone.jsonl'))) ?? '', /cannot open \(ENOENT\)/);
});

test('a run whose first record outgrows the first block (a group of long roll-outs on one line) is found by the reader', async () => {
  const base = mkdtempSync(join(tmpdir(), 'cl-longline-'));
  dirs.push(base);
  mkdirSync(join(base, 'long'));
  const long = JSON.stringify({ kind: 'group', step: 1, question_id: 'q', rollouts: [{ response: 'x'.repeat(200_000) + ' \\boxed{1}' }] }) + '\n';
  // The keys after the long text: the first block holds no whole line and no key that tells.
  writeFileSync(join(base, 'long/s.jsonl'), long.replace('{"kind":"group","step":1,"question_id":"q",', '{').replace('}]}', '}],"kind":"group","step":1,"question_id":"q"}'));
  mkdirSync(join(base, 'junk'));
  writeFileSync(join(base, 'junk/s.jsonl'), JSON.stringify({ blob: 'y'.repeat(200_000) }) + '\n');
  assert.deepEqual(await runFolders([join(base, 'long/s.jsonl'), join(base, 'junk/s.jsonl')], [base]), [join(base, 'long')]);
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}
