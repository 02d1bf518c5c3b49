// `consensus-lens serve --stdio` (docs/contract.md#command-line): the reward worker, driven through its streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runServe } from '../src/cli/serve';
import { runScore } from '../src/cli/score-command';

// biome-ignore lint/suspicious/noExplicitAny: the worker's answers are parsed JSON, read field by field.
type Obj = Record<string, any>;

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Runs the worker on the given input lines; returns its exit code and answer lines. */
async function serve(lines: string[], args: string[] = []): Promise<{ code: number; answers: Obj[]; stderr: string }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = collect(stdout);
  const err = collect(stderr);
  const done = runServe(['--stdio', '--jobs', '0', ...args], { stdin, stdout, stderr });
  for (const l of lines) stdin.write(l + '\n');
  stdin.end();
  const code = await done;
  const text = out();
  return { code, answers: text.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: err() };
}

async function score(records: Obj[], args: string[]): Promise<Obj[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-serve-'));
  try {
    const file = join(dir, 'step.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out = collect(stdout);
    const code = await runScore([file, '--jobs', '0', ...args], { stdin: new PassThrough(), stdout, stderr });
    assert.equal(code, 0);
    return out().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const words = 'we compute the sum then divide both sides and check the value so the answer is'.split(' ');
function response(i: number, answer: string): string {
  const parts: string[] = [];
  for (let k = 0; k < 40; k++) parts.push(words[(i * 7 + k * (i % 5 + 1)) % words.length]);
  return `${parts.join(' ')} \\boxed{${answer}}`;
}

function group(step: number, qid: string, answers: string[], withConfidence = true, extra: Obj = {}): Obj {
  return {
    kind: 'group',
    step,
    question_id: qid,
    prompt: `What is ${qid}?`,
    rollouts: answers.map((a, i) => {
      const r: Obj = { sample_idx: i, response: response(i, a) };
      if (withConfidence) r.mean_logprob = -0.05 * ((i * 13) % 7) - 0.1;
      return r;
    }),
    ...extra,
  };
}

const G1 = group(3, 'q1', ['12', '12', '13', '12', '7', '13', '13', '13']);
const G2 = group(3, 'q2', ['1/2', '0.5', '\\frac{1}{2}', '2', '2']);

test('one answer line per request, results in request order with docs/contract.md#command-line fields', async () => {
  const { code, answers } = await serve([
    JSON.stringify({ operator: 'majority', groups: [G1, G2] }),
    JSON.stringify({ operator: 'core', params: { kappa: 0.1 }, groups: [G2] }),
  ]);
  assert.equal(code, 0);
  assert.equal(answers.length, 2);
  const [a, b] = answers;
  assert.deepEqual(a.results.map((r: Obj) => [r.step, r.question_id]), [[3, 'q1'], [3, 'q2']]);
  for (const r of [...a.results, ...b.results]) {
    for (const k of ['label', 'rewards', 'gate', 'advantages']) assert.ok(k in r, k);
  }
  assert.equal(a.results[0].label, '13');
  assert.deepEqual(a.results[0].rewards, [0, 0, 1, 0, 0, 1, 1, 1]);
  assert.equal(a.results[1].label, '1/2'); // three equivalent forms of one half
  assert.equal(b.results[0].confidence, 'used');
  assert.equal(b.results[0].rewards.length, 5);
});

test('a bad request gets {"error"} and the worker keeps serving', async () => {
  const ok = JSON.stringify({ operator: 'majority', groups: [G1] });
  const rollout = { step: 1, question_id: 'x', response: 'r' };
  const { code, answers } = await serve([
    'not json',
    ok,
    JSON.stringify({ operator: 'nope', groups: [G1] }),
    JSON.stringify({ operator: 'core', params: { kappa: 2 }, groups: [G1] }),
    JSON.stringify({ operator: 'core', params: { kapa: 0.2 }, groups: [G1] }),
    JSON.stringify({ operator: 'core', groups: [rollout] }),
    JSON.stringify({ operator: 'core', groups: [{ step: 1, question_id: 'x', rollouts: [{ answer: '1' }] }] }),
    JSON.stringify({ operator: 't3rl', groups: [G1] }),
    JSON.stringify({ operator: 'core', groups: 'all' }),
    '[1,2]',
    '',
    ok,
  ]);
  assert.equal(code, 0);
  assert.equal(answers.length, 11); // the blank line is not a request
  const errors = answers.map((x) => x.error as string | undefined);
  assert.match(errors[0]!, /^request 1: the request is not JSON/);
  assert.equal(errors[1], undefined);
  assert.match(errors[2]!, /unknown operator "nope"/);
  assert.match(errors[3]!, /kappa = 2 is outside/);
  assert.match(errors[4]!, /unknown parameter "kapa"/);
  assert.match(errors[5]!, /groups\[0\] must be a group record/);
  assert.match(errors[6]!, /"response"/);
  assert.match(errors[7]!, /t3rl cannot run on this group/);
  assert.match(errors[8]!, /"groups" must be an array/);
  assert.match(errors[9]!, /must be a JSON object/);
  assert.deepEqual(answers[10], answers[1]);
});

test('a request id is echoed in its answer (results and errors alike), so a client can match answers to requests', async () => {
  const { answers } = await serve([
    JSON.stringify({ id: 'c1-1', operator: 'majority', groups: [G1] }),
    JSON.stringify({ id: 7, operator: 'nope', groups: [G1] }),
    JSON.stringify({ id: 'c1-3', operator: 't3rl', groups: [G1] }),
    JSON.stringify({ operator: 'majority', groups: [G2] }),
    JSON.stringify({ id: { x: 1 }, operator: 'majority', groups: [G2] }),
  ]);
  assert.equal(answers.length, 5);
  assert.equal(answers[0].id, 'c1-1');
  assert.ok(Array.isArray(answers[0].results));
  assert.equal(answers[1].id, 7);
  assert.match(answers[1].error, /unknown operator/);
  assert.equal(answers[2].id, 'c1-3');
  assert.match(answers[2].error, /t3rl cannot run/);
  assert.equal('id' in answers[3], false);
  assert.match(answers[4].error, /"id" must be/);
});

test('ground truth in a request is ignored (group- and roll-out-level)', async () => {
  const withTruth = structuredClone(G1);
  withTruth.ground_truth = '7';
  withTruth.rollouts.forEach((r: Obj) => (r.ground_truth = '7'));
  const odd = structuredClone(G1);
  odd.ground_truth = { not: 'a string' }; // would be a type error if it were read at all
  const { answers } = await serve(
    [G1, withTruth, odd].map((g) => JSON.stringify({ operator: 'core', groups: [g] })),
  );
  assert.ok(answers.every((a) => !a.error), JSON.stringify(answers));
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[2], answers[0]);
});

test('params: engine ids, CLI flags and snake_case; command-line flags are defaults', async () => {
  const req = (params: Obj) => JSON.stringify({ operator: 'msttrl', params, groups: [group(1, 'm', ['1', '1', '2'], false, { outcome_checks: [{ answer: '1', passed: 3, trials: 5 }] })] });
  const { answers } = await serve([req({ tauLow: 0.7 }), req({ 'tau-low': 0.7 }), req({ tau_low: 0.7 }), req({})], ['--tau-low', '0.7']);
  assert.ok(answers.every((a) => !a.error), JSON.stringify(answers));
  // p = 0.6 < τ_low = 0.7: Wrong, zero reward, in all four spellings (the last via the flag).
  for (const a of answers) assert.deepEqual(a.results[0].rewards.slice(0, 2), [0, 0]);
  const { answers: plain } = await serve([req({})]);
  assert.deepEqual(plain[0].results[0].rewards.slice(0, 2), [0.6, 0.6]); // Candidate: R = p
});

test('core without confidence runs as ec and says so', async () => {
  const g = group(1, 'q', ['1', '1', '2', '2', '2'], false);
  const { answers } = await serve([JSON.stringify({ operator: 'core', groups: [g] }), JSON.stringify({ operator: 'ec', groups: [g] })]);
  assert.equal(answers[0].results[0].confidence, 'missing');
  assert.deepEqual(answers[0].results[0].rewards, answers[1].results[0].rewards);
  assert.equal(answers[0].results[0].gate, answers[1].results[0].gate);
});

test("MS-TTRL's cache spans the requests of one worker process", async () => {
  const checks = (passed: number) => ({ outcome_checks: [{ answer: '5', passed, trials: 4 }] });
  const step1 = group(1, 'm', ['5', '5', '6'], false, checks(4)); // p = 1: Correct, resolved
  const step2 = group(2, 'm', ['5', '6', '6'], false, checks(0)); // p = 0 would be Wrong if re-judged
  const req = (g: Obj) => JSON.stringify({ operator: 'msttrl', params: { lambda: 1 }, groups: [g] });
  const { answers } = await serve([req(step1), req(step2)]);
  assert.equal(answers[1].results[0].label, '5');
  assert.deepEqual(answers[1].results[0].rewards, [1, 0.5, 0.5]); // "6" unchecked: Candidate, p = 0.5
  const { answers: fresh } = await serve([req(step2)]); // a new worker has no cache
  assert.deepEqual(fresh[0].results[0].rewards, [0, 0.5, 0.5]);
  assert.equal(fresh[0].results[0].label, null);
});

test('parity: serve answers equal `score` on the same groups, for every operator', async () => {
  const ver = (i: number) => ({ verification: { valid: i % 3 === 0 } });
  const gs = [G1, G2, group(4, 'q3', ['a', 'b', 'b', 'c', 'a', 'a', '', 'b'])].map((g) => {
    const c = structuredClone(g);
    c.rollouts.forEach((r: Obj, i: number) => Object.assign(r, ver(i)));
    c.outcome_checks = [{ answer: c.rollouts[0].response.match(/boxed\{(.*)\}/)[1], passed: 3, trials: 4 }];
    return c;
  });
  const ops = ['majority', 'cisc', 'ec', 'core', 't3rl', 'msttrl'];
  const params = { kappa: 0.3, tau: 0.5, omega: 3 };
  const scored = await score(gs, ['--operators', ops.join(','), '--kappa', '0.3', '--tau', '0.5', '--omega', '3']);
  for (const op of ops) {
    const { answers } = await serve([JSON.stringify({ operator: op, params, groups: gs })]);
    assert.equal(answers[0].error, undefined, answers[0].error);
    answers[0].results.forEach((r: Obj, i: number) => {
      const s = scored[i].results[op];
      assert.ok(s, `${op} in score output`);
      assert.deepEqual([r.label, r.rewards, r.gate, r.advantages], [s.label, s.rewards, s.gate, s.advantages], op);
    });
  }
});

test('serve requires --stdio', async () => {
  await assert.rejects(runServe([], { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }), /--stdio/);
});

test('round trip: a training loop logs with the Python RunLogger while the extension-side reader follows; CoRE uses the confidences', async () => {
  const { spawn } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const { RunIndex, rolloutsOf } = await import('../src/logs/log-layer');
  const { prepareGroup, scoreGroup } = await import('../src/engine');
  const dir = mkdtempSync(join(tmpdir(), 'cl-roundtrip-'));
  const run = join(dir, 'run');
  const expectedFile = join(dir, 'expected.json');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(run);
  const notices: string[] = [];
  const index = await RunIndex.open(run, { follow: true, onNotice: (n) => notices.push(`${n.level}: ${n.message}`), pollMs: 100, idleMs: 300, safetyScanMs: 1000 });
  const steps = 5;
  const groupsPerStep = 4;
  let seenWhileRunning = 0;
  let running = true;
  index.onDidChange(() => {
    if (running) seenWhileRunning = index.groups().filter((e) => e.complete).length;
  });
  try {
    const child = spawn('python3', [join('python', 'tests', 'sim_training_loop.py'), run, expectedFile, '--steps', String(steps), '--groups', String(groupsPerStep), '--n', '16', '--pause', '0.25'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    running = false;
    assert.equal(code, 0, `simulated training loop failed: ${err}`);
    const deadline = Date.now() + 15_000;
    while (index.groups().filter((e) => e.complete).length < steps * groupsPerStep && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      await index.settled();
    }
    assert.ok(seenWhileRunning > 0, 'the reader saw groups while the loop was still writing');
    const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as Record<string, number[]>;
    const entries = index.groups();
    assert.equal(entries.length, steps * groupsPerStep, notices.join('\n'));
    for (const e of entries) {
      assert.ok(e.complete);
      const want = expected[`${e.step}/${e.questionId}`];
      assert.deepEqual(rolloutsOf(e).map((r) => r.meanLogprob), want, `${e.step}/${e.questionId}: every confidence arrives`);
      assert.equal(e.groundTruth, '12');
      const g = await index.loadGroup(e.key);
      const s = scoreGroup(prepareGroup(g), { operators: ['core'] });
      assert.equal(s.results.core?.confidence, 'used', `${e.step}/${e.questionId}`);
    }
    assert.ok(!notices.some((n) => n.startsWith('error')), notices.join('\n'));
  } finally {
    index.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
