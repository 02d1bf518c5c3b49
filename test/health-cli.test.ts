// `consensus-lens health` and report's health section end to end (built dist/cli.js), on a
// generated native run with a format collapse, on the verl/TRL fixtures, and on bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { makeRun } from './engine/health-runs';
import { collectHealth } from '../src/cli/health';
import { labelFreeCopies } from '../src/engine';
import { scratchDir } from './scratch';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const dir = scratchDir('cl-health-');
const run = join(dir, 'run');
mkdirSync(run);
const groups = makeRun({ steps: 20, questions: 5, n: 8, accuracy: 0.5, seed: 4 }, { formatCollapseAt: 10 });
for (let step = 0; step < 20; step++) {
  const lines = groups
    .filter((g) => g.step === step)
    .map((g) =>
      JSON.stringify({
        kind: 'group',
        step,
        question_id: g.questionId,
        ground_truth: g.groundTruth,
        rollouts: g.rollouts.map((r) => ({ response: r.response, mean_logprob: r.meanLogprob, reward: r.reward, sample_idx: r.sampleIdx })),
        extra: { operator: g.loggedOperator },
      }),
    );
  writeFileSync(join(run, `step_${String(step).padStart(3, '0')}.jsonl`), lines.join('\n') + '\n');
}

test('health: the format collapse alarm, the constant penalty, the timeline; --json has the same numbers', () => {
  const text = cli(['health', run]);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /unformatted share 0\.00 → 1\.00 from step ≈ 10/);
  assert.match(text.out, /\[constant-penalty\] constant reward 0\.00 for every roll-out in 50 of 100 groups from step 10/);
  assert.match(text.out, /Timeline:/);
  assert.match(text.out, /How many roll-outs/);
  const json = cli(['health', run, '--json', '--jobs', '0']);
  assert.equal(json.code, 0, json.err);
  const h = JSON.parse(json.out);
  assert.equal(h.format, 'consensus-lens/health/v1');
  assert.equal(h.groups, 100);
  assert.deepEqual(h.steps, Array.from({ length: 20 }, (_, i) => i));
  const alarm = h.alarms.find((a: { series: string }) => a.series === 'unformatted_share');
  assert.equal(alarm.step, 10);
  const unf = h.series.find((s: { id: string }) => s.id === 'unformatted_share');
  assert.deepEqual(unf.values, Array.from({ length: 20 }, (_, i) => (i < 10 ? 0 : 1)));
  assert.equal(h.reward_bugs[0].kind, 'constant-penalty');
  // Worker threads (the default) and in-process give the same analysis.
  const threaded = JSON.parse(cli(['health', run, '--json']).out);
  assert.deepEqual(threaded.alarms, h.alarms);
  assert.deepEqual(threaded.rollouts_what_if, h.rollouts_what_if);
});

test('report prints the health section', () => {
  const r = cli(['report', run]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /health: \d+ alarms?, 1 reward-bug class/);
  assert.match(r.out, /alarm: unformatted share 0\.00 → 1\.00 from step ≈ 10/);
  assert.match(r.out, /reward bug \(constant-penalty\)/);
});

test('health on the verl and TRL fixtures (no confidence, two steps) and on bad input', () => {
  const r = cli(['health', 'test/fixtures/logs']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Alarms: none/);
  assert.match(r.out, /change points need at least 8/);
  assert.match(r.out, /Confidence premise: not checked/);
  // Two runs under one folder (TRL completions and a verl dump): one timeline each, never mixed.
  assert.match(r.out, /\(run trl\/completions\)/);
  assert.match(r.out, /\(run verl\/rollout\)/);
  const j = JSON.parse(cli(['health', 'test/fixtures/logs', '--json']).out);
  const runs: string[] = j.runs.map((x: { run: string }) => x.run);
  for (const r of ['trl/completions', 'verl/rollout', 'writers/verl-uid/rollout']) assert.ok(runs.includes(r), r);
  // A validation dump is a run of its own, never mixed into the training timeline.
  assert.ok(runs.includes('writers/verl-uid/val (validation)'));
  assert.equal(new Set(runs).size, runs.length);
  assert.equal(j.groups, j.runs[0].groups);
  const missing = cli(['health', join(dir, 'nope')]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /nope/);
  assert.equal(cli(['health']).code, 2);
  const bad = join(dir, 'bad');
  mkdirSync(bad);
  const file = join(bad, 'a.jsonl');
  writeFileSync(file, JSON.stringify({ step: 0, question_id: 'q', response: 'so \\boxed{1}' }) + '\n{"step": 1, oops\n');
  appendFileSync(file, JSON.stringify({ step: 0, question_id: 'q', response: 'so \\boxed{2}' }) + '\n');
  const b = cli(['health', bad]);
  // A malformed line is a warning naming file and line; the rest of the run is analysed; exit 3.
  assert.equal(b.code, 3);
  assert.match(b.err, /1 of 3 lines skipped/);
  assert.match(b.err, /a\.jsonl:2: malformed JSON/);
  assert.match(b.out, /1 step, 1 group, 2 roll-outs/);
});

test('health: a TTRL pseudo-label in gts is no ground truth (no "ground-truth leak"; the ±1 rewards read as scaled)', () => {
  // a TTRL run rewards with the vote: named, its rewards are checked against it
  const r = cli(['health', 'test/fixtures/logs/writers/ttrl-dapo', '--configured-operator', 'majority']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /looks like the pseudo-label: equal to the vote in 12 of 12 training groups/);
  assert.doesNotMatch(r.out, /ground-truth-leak/);
  assert.match(r.out, /\[scaled\] logged reward = 2·R − 1/);
});

test('labelFreeCopies (the editor\'s store and dashboard): copies without the pseudo-label truth; the kept records are untouched', async () => {
  const records = await collectHealth('test/fixtures/logs/writers/ttrl-dapo', { jobs: 0 }, () => undefined, false);
  assert.ok(records.length >= 8 && records.every((h) => h.truth !== null));
  const copies = labelFreeCopies(records);
  assert.notEqual(copies, records);
  assert.ok(copies.every((h) => h.truth === null && h.auroc.truth === undefined));
  assert.ok(records.every((h) => h.truth !== null));
  // real ground truth (verl's own reward against gts) is kept as it is
  const verl = await collectHealth('test/fixtures/logs/writers/verl-uid', { jobs: 0 }, () => undefined, false);
  assert.equal(labelFreeCopies(verl), verl);
});
