// The consensus-lens command end to end (built dist/cli.js): output shape, sweeps, bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { scratchDir } from './scratch';

function cli(args: string[], input?: string) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', input, maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr, lines: r.stdout.trim() ? r.stdout.trim().split('\n').map((l) => JSON.parse(l)) : [] };
}

const dir = scratchDir('cl-cli-');
const group = (q: string, answers: (string | null)[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: 'group',
    step: 0,
    question_id: q,
    rollouts: answers.map((a, i) => ({ response: a === null ? `truncated \\boxed{${i}` : `derivation ${i} gives \\boxed{${a}}`, mean_logprob: -0.1 * (i + 1) })),
    ...extra,
  });

test('score: one line per group in first-record order, with docs/contract.md#command-line keys', () => {
  const file = join(dir, 'a.jsonl');
  writeFileSync(file, [group('b', ['1', '1', '2']), group('a', ['3', '4', '4', null])].join('\n') + '\n');
  const r = cli(['score', file]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.lines.map((l) => l.question_id), ['b', 'a']);
  const core = r.lines[1].results.core;
  for (const key of ['label', 'rewards', 'gate', 'advantages', 'mass', 'support', 'iterations']) assert.ok(key in core, key);
  assert.equal(r.lines[1].n, 4);
  assert.equal(r.lines[1].results.majority.label, '4');
  // The label-free operators the log allows run too (token entropy estimated from the mean log-prob).
  assert.deepEqual(Object.keys(r.lines[0].results), ['majority', 'cisc', 'ec', 'core', 'empo', 'entropy', 'likelihood', 'novelty']);
  assert.deepEqual(Object.keys(r.lines[0].unavailable), ['t3rl', 'msttrl', 'selfcertainty']);
});

test('score reads native JSONL from stdin and honours --operators and parameters', () => {
  const r = cli(['score', '-', '--operators', 'core,majority', '--kappa', '1'], group('q', ['5', '5', '6']) + '\n');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(Object.keys(r.lines[0].results), ['core', 'majority']);
});

test('sweep: one line per setting and operator, label accuracy only with ground truth', () => {
  const file = join(dir, 's.jsonl');
  writeFileSync(file, [group('a', ['1', '1', '2'], { ground_truth: '1' }), group('b', ['7', '8', '8'])].join('\n') + '\n');
  const r = cli(['sweep', file, '--kappa', '0:1:0.5', '--operators', 'core,ec']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.lines.length, 6);
  assert.deepEqual(r.lines[0].params, { kappa: 0 });
  assert.deepEqual(r.lines.map((l) => l.operator), ['core', 'ec', 'core', 'ec', 'core', 'ec']);
  for (const l of r.lines) {
    assert.equal(l.groups, 2);
    assert.equal(l.label_accuracy, 1); // only group a has ground truth, and its label is right
    assert.equal(typeof l.mean_gate, 'number');
  }
  const grid = cli(['sweep', file, '--kappa', '0.1,0.2', '--tau', '0.25,0.5', '--alpha', '0.1']);
  assert.equal(grid.lines.length, 4);
});

test('bad input: each problem is one line naming file and line; the rest is scored; never NaN', () => {
  const file = join(dir, 'bad.jsonl');
  writeFileSync(
    file,
    [
      '{"kind":"group","step":1,"question_id":"ok1","rollouts":[{"response":"\\\\boxed{1}","mean_logprob":NaN},{"response":"\\\\boxed{1}","mean_logprob":-0.2}]}',
      '{not json',
      '{"kind":"rollout","step":1,"question_id":"c","response":42}',
      '{"kind":"group","step":1,"question_id":"ok2","rollouts":[{"response":"\\\\boxed{2}","token_logprobs":[-0.1,-Infinity]}]}',
    ].join('\n') + '\n',
  );
  const r = cli(['score', file]);
  // two of four lines skipped: exit 3, with the summary (docs: exit codes)
  assert.equal(r.code, 3);
  assert.match(r.err, /consensus-lens: 2 of 4 lines skipped \(each named above\); exit 3 \(--allow-skipped accepts this\)/);
  assert.equal(cli(['score', file, '--allow-skipped']).code, 0);
  assert.deepEqual(r.lines.map((l) => l.question_id), ['ok1', 'ok2']);
  assert.ok(!r.out.includes('NaN') && !r.out.includes('Infinity'));
  assert.equal(r.lines[0].results.core.confidence, 'missing');
  const errLines = r.err.trim().split('\n');
  assert.ok(errLines.some((l) => l.includes('bad.jsonl:2') && /malformed/i.test(l)), r.err);
  assert.ok(errLines.some((l) => l.includes('bad.jsonl:3') && l.includes('response')), r.err);
  assert.ok(errLines.some((l) => l.includes('bad.jsonl:1') && /NaN|non-finite/i.test(l)), r.err);
});

test('nothing to score exits non-zero with one clear line', () => {
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '');
  const e = cli(['score', empty]);
  assert.notEqual(e.code, 0);
  assert.match(e.err, /empty\.jsonl/);
  const missing = cli(['score', join(dir, 'nope.jsonl')]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /nope\.jsonl/);
  assert.equal(missing.err.trim().split('\n').length, 1);
});

test('bad flags are usage errors (exit 2)', () => {
  assert.equal(cli(['score', '-', '--kappa', '2'], '').code, 2);
  assert.equal(cli(['score', '-', '--operators', 'core,vote'], '').code, 2);
  assert.equal(cli(['sweep', 'x', '--kappa', '1:0:0.1']).code, 2);
  assert.equal(cli(['frobnicate']).code, 2);
});

test('the demo run: every archetype is there', () => {
  const r = cli(['score', 'examples/demo-run']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.lines.length, 36);
  const regimes = new Set(r.lines.map((l) => l.analysis.regime));
  assert.deepEqual([...regimes].sort(), ['competence-floor', 'contested', 'saturated']);
  assert.ok(r.lines.some((l) => l.analysis.overturn === true), 'a CoRE overturn');
  assert.ok(r.lines.some((l) => l.results.majority.label === ''), 'an empty-box plurality');
  assert.ok(r.lines.some((l) => l.results.t3rl && l.results.t3rl.label !== l.results.majority.label), 'T3RL flips a vote');
  assert.ok(r.lines.some((l) => l.results.msttrl), 'MS-TTRL has outcome checks');
  assert.ok(r.lines.some((l) => l.reward_mismatch?.indices.length), 'a logged reward that disagrees with the vote');
});
