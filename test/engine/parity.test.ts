// `consensus-lens score` against an independent numpy implementation of docs/contract.md#operators
// (bench/baseline.py) on generated groups: labels identical, numbers within 1e-6.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { rng, randomPlan, synthRollouts } from '../../scripts/synth';
import { scratchDir } from '../scratch';
import { pythonWith, skipWithoutPython } from '../tools';

type Result = { label: string | null; rewards: number[]; gate: number; advantages: number[]; mass?: number[]; support?: number[]; iterations?: number };
type Line = { question_id: string; results: Record<string, Result> };

function groups(seed: number, count: number): string {
  const r = rng(seed);
  const lines: string[] = [];
  for (let q = 0; q < count; q++) {
    const n = q % 7 === 0 ? 1 + Math.floor(r() * 4) : 8 + Math.floor(r() * 57);
    const plan = randomPlan(r, n);
    // Some truncated roll-outs (no answer), some empty boxes.
    if (r() < 0.3) plan.push({ answer: null, count: 1 + Math.floor(r() * 3) });
    if (r() < 0.2) plan.push({ answer: '', count: 1 + Math.floor(r() * 3) });
    const rollouts = synthRollouts(r, plan, { bytes: 100 + Math.floor(r() * 600), preExtracted: true });
    for (const ro of rollouts) {
      // No answer: a truncated box, which extraction reads as no answer (the baseline sees None).
      if (ro.answer === undefined) ro.response += ' so the answer is \\boxed{';
      ro.verification = { valid: r() < 0.3 };
    }
    lines.push(JSON.stringify({ kind: 'group', step: Math.floor(q / 10), question_id: `q${q}`, rollouts }));
  }
  return lines.join('\n') + '\n';
}

function compare(ts: Line[], py: Line[], context: string): number {
  assert.equal(ts.length, py.length, context);
  let worst = 0;
  for (let k = 0; k < py.length; k++) {
    assert.equal(ts[k].question_id, py[k].question_id);
    for (const [op, want] of Object.entries(py[k].results)) {
      const got = ts[k].results[op];
      const where = `${context} ${py[k].question_id} ${op}`;
      assert.ok(got, `${where}: missing`);
      assert.equal(got.label, want.label, `${where}: label`);
      for (const key of ['rewards', 'advantages', 'mass'] as const) {
        if (!want[key]) continue;
        want[key]!.forEach((v, i) => {
          const d = Math.abs(v - got[key]![i]);
          worst = Math.max(worst, d);
          assert.ok(d <= 1e-6, `${where}: ${key}[${i}] ${got[key]![i]} vs ${v}`);
        });
      }
      worst = Math.max(worst, Math.abs(got.gate - want.gate));
      assert.ok(Math.abs(got.gate - want.gate) <= 1e-6, `${where}: gate`);
      if (want.support) assert.deepEqual(got.support, want.support, `${where}: support`);
      if (want.iterations !== undefined) assert.ok(Math.abs(got.iterations! - want.iterations) <= 1, `${where}: iterations`);
    }
  }
  return worst;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
const parse = (s: string): Line[] => s.trim().split('\n').map((l) => JSON.parse(l));

test('score agrees with the numpy baseline on generated groups (defaults and other κ/τ/α)', { skip: skipWithoutPython('numpy') }, () => {
  const dir = scratchDir('cl-parity-');
  const file = join(dir, 'groups.jsonl');
  writeFileSync(file, groups(11, 60));
  for (const flags of [[], ['--kappa', '0.5', '--tau', '1', '--alpha', '0.05'], ['--kappa', '1', '--alpha', '0.3', '--shift', '0.5', '--omega', '2']]) {
    const ops = 'majority,cisc,ec,core,t3rl';
    const ts = parse(run(process.execPath, ['dist/cli.js', 'score', file, '--operators', ops, ...flags]));
    const py = parse(run(pythonWith('numpy') as string, ['bench/baseline.py', file, '--operators', ops, ...flags]));
    compare(ts, py, flags.join(' ') || 'defaults');
  }
});

test('in-process and worker-thread scoring give identical output', () => {
  const dir = scratchDir('cl-parity-');
  const file = join(dir, 'groups.jsonl');
  writeFileSync(file, groups(12, 30));
  const a = run(process.execPath, ['dist/cli.js', 'score', file, '--jobs', '0']);
  // One worker; the main thread and one worker; the main thread and two workers.
  for (const jobs of ['1', '2', '3']) assert.equal(run(process.execPath, ['dist/cli.js', 'score', file, '--jobs', jobs]), a, `--jobs ${jobs}`);
});

test('MS-TTRL across threads: every question stays on one thread, so its outcome cache carries to later steps as in-process', () => {
  // 6 questions × 10 steps; outcome checks only at step 0, so from step 1 on MS-TTRL runs on the
  // cache alone (a group scored on a thread that had not seen its question would be unavailable).
  const r = rng(5);
  const lines: string[] = [];
  for (let step = 0; step < 10; step++) {
    for (let q = 0; q < 6; q++) {
      const rollouts = synthRollouts(r, randomPlan(r, 16), { bytes: 300, preExtracted: true });
      const answers = [...new Set(rollouts.map((ro) => ro.answer).filter((a): a is string => typeof a === 'string'))];
      const group: Record<string, unknown> = { kind: 'group', step, question_id: `m${q}`, rollouts };
      if (step === 0) group.outcome_checks = answers.map((answer, k) => ({ answer, passed: k % 3, trials: 2 }));
      lines.push(JSON.stringify(group));
    }
  }
  const dir = scratchDir('cl-parity-');
  const file = join(dir, 'msttrl.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  // Without CoRE a worker scores whole groups; with it, a worker computes only the reasoning
  // cosines and the main thread runs the operators when they come back.
  for (const ops of ['majority,msttrl', 'core,msttrl']) {
    const args = (jobs: string) => ['dist/cli.js', 'score', file, '--operators', ops, '--jobs', jobs];
    const a = run(process.execPath, args('0'));
    const later = parse(a).filter((l) => (l as unknown as { step: number }).step > 0);
    assert.equal(later.length, 54);
    assert.ok(later.every((l) => l.results.msttrl), `${ops}: MS-TTRL scored every later step from its cache`);
    for (const jobs of ['1', '2', '3']) assert.equal(run(process.execPath, args(jobs)), a, `${ops}, --jobs ${jobs}`);
  }
});
