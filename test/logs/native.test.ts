import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { collect, groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

test('native run mixing group and roll-out records across files, in first-record order', async () => {
  const { dir, cleanup } = tempDir();
  try {
    // file a: a group record, roll-outs 0..1 of q2 (out of order), another group record
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'q1', 4), rollout(1, 'q2', 1), rollout(1, 'q2', 0), groupRec(1, 'q3', 3)]));
    // file b (sub-folder): the rest of q2, reversed
    write(dir, 'sub/b.jsonl', jsonl([rollout(1, 'q2', 3), rollout(1, 'q2', 2)]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(notices, []);
    assert.deepEqual(groups.map((g) => g.questionId), ['q1', 'q2', 'q3']);
    const [g1, g2, g3] = groups;
    assert.equal(g1.rollouts.length, 4);
    assert.equal(g1.prompt, 'prompt q1');
    assert.equal(g1.groundTruth, '1');
    assert.equal(g1.rollouts[2].response, 'g q1 2 \\boxed{2}');
    assert.equal(g1.rollouts[1].reward, 1);
    assert.equal(g1.rollouts[0].source?.file, join(dir, 'a.jsonl'));
    assert.equal(g1.rollouts[0].source?.line, 1);
    assert.deepEqual(g2.rollouts.map((r) => r.sampleIdx), [0, 1, 2, 3]);
    assert.equal(g2.rollouts[3].response, 'resp q2 3 \\boxed{1}');
    assert.ok(Math.abs((g2.rollouts[3].meanLogprob ?? 0) + 0.4) < 1e-12);
    assert.equal(g3.rollouts.length, 3);
  } finally {
    cleanup();
  }
});

test('wire names are mapped: answer, token_logprobs mean, verification, outcome_checks, run_id', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = write(
      dir,
      'r.jsonl',
      jsonl([
        { step: 3, question_id: 7, run_id: 'runA', response: 'x', answer: '\\frac{1}{2}', token_logprobs: [-1, -3], verification: { valid: true, tool_output: '0.5' }, sample_idx: 0 },
        { step: 3, question_id: 7, run_id: 'runA', response: 'y', reward: 0.5, verification: { tool_output: 0.25 }, sample_idx: 1 },
        { step: '4', question_id: 'g', rollouts: [{ response: 'z' }], outcome_checks: [{ answer: '1/2', passed: 6, trials: 8 }] },
      ]),
    );
    const { groups, notices } = await collect(f);
    assert.deepEqual(notices, []);
    assert.equal(groups.length, 2);
    const [a, b] = groups;
    assert.equal(a.run, 'runA');
    assert.equal(a.questionId, '7');
    assert.equal(a.rollouts[0].answer, '\\frac{1}{2}');
    assert.equal(a.rollouts[0].meanLogprob, -2);
    assert.deepEqual(a.rollouts[0].verification, { valid: true, toolOutput: '0.5' });
    assert.deepEqual(a.rollouts[1].verification, { toolOutput: '0.25' });
    assert.equal(a.rollouts[1].reward, 0.5);
    assert.equal(a.rollouts[1].meanLogprob, null);
    assert.equal(b.step, 4);
    assert.deepEqual(b.outcomeChecks, [{ answer: '1/2', passed: 6, trials: 8 }]);
    assert.equal('run' in b, false);
  } finally {
    cleanup();
  }
});

test('bad input: malformed line, wrong field types, NaN tokens, empty file; the rest loads', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lines = [
      JSON.stringify(groupRec(1, 'q1', 2)),
      '{"kind":"group", "step":1, "question_id":"broken", "rollouts":[{"respo',
      JSON.stringify({ step: 1, question_id: 'q2', response: 42 }),
      JSON.stringify({ step: 'x', question_id: 'q3', response: 'r' }),
      '{"step":1,"question_id":"q4","response":"NaN is fine in text","mean_logprob":NaN,"token_logprobs":[-Infinity]}',
      '{"step":1,"question_id":"q4","response":"r2","mean_logprob":-Infinity}',
      JSON.stringify({ step: 1, question_id: 'q5', response: 'ok', mean_logprob: 'high' }),
    ];
    write(dir, 'a.jsonl', lines.join('\n') + '\n');
    write(dir, 'empty.jsonl', '');
    const { groups, notices } = await collect(dir);
    assert.deepEqual(groups.map((g) => g.questionId), ['q1', 'q4', 'q5']);
    const q4 = groups[1];
    assert.equal(q4.rollouts.length, 2);
    assert.equal(q4.rollouts[0].response, 'NaN is fine in text');
    assert.equal(q4.rollouts[0].meanLogprob, null);
    assert.equal(q4.rollouts[1].meanLogprob, null);
    assert.equal(groups[2].rollouts[0].meanLogprob, null);
    const msgs = notices.map((n) => n.message);
    const file = join(dir, 'a.jsonl');
    assert.ok(msgs.some((m) => m.startsWith(`${file}:2: malformed JSON`)), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.startsWith(`${file}:3: field "response" must be a string`)), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.startsWith(`${file}:4: field "step" must be a non-negative integer`)), msgs.join('\n'));
    assert.equal(msgs.filter((m) => m.includes('non-finite')).length, 1);
    assert.ok(msgs.some((m) => m.startsWith(`${file}:7: field "mean_logprob" has an unexpected type`)));
    assert.ok(msgs.some((m) => m === `${join(dir, 'empty.jsonl')}: empty file, no records`));
    for (const n of notices) assert.ok(n.file, `every notice names its file: ${n.message}`);
  } finally {
    cleanup();
  }
});

test('missing path throws one clear message; an unsupported .jsonl is named and skipped; files that are not logs are summed up quietly', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await assert.rejects(collect(join(dir, 'nope')), /nope: no such file or folder/);
    write(dir, 'notes.txt', 'hello\nworld\n');
    write(dir, 'other.jsonl', jsonl([{ a: 1 }]));
    write(dir, 'ok.jsonl', jsonl([groupRec(0, 'q', 2)]));
    const { groups, notices } = await collect(dir);
    assert.equal(groups.length, 1);
    const errs = notices.filter((n) => n.level === 'error').map((n) => n.file);
    assert.deepEqual(errs, [join(dir, 'other.jsonl')]);
    assert.deepEqual(notices.filter((n) => /not logs? skipped/.test(n.message)).map((n) => n.message), [`${dir}: 1 file that is not logs skipped (notes.txt)`]);
    // named on the command line, a file that is not a log is an error
    const one = await collect(join(dir, 'notes.txt'));
    assert.deepEqual(one.notices.filter((n) => n.level === 'error').map((n) => n.file), [join(dir, 'notes.txt')]);
  } finally {
    cleanup();
  }
});

test("'-' reads native JSONL from stdin", async () => {
  const text = jsonl([rollout(2, 'a', 1), groupRec(2, 'b', 2), rollout(2, 'a', 0)]);
  const { groups, notices } = await collect('-', { stdin: Readable.from([Buffer.from(text)]) });
  assert.deepEqual(notices, []);
  assert.deepEqual(groups.map((g) => [g.questionId, g.rollouts.length]), [['a', 2], ['b', 2]]);
  assert.equal(groups[0].rollouts[0].response, 'resp a 0 \\boxed{0}');
});

test('duplicate group records are skipped with a warning', async () => {
  const { dir, cleanup } = tempDir();
  try {
    write(dir, 'a.jsonl', jsonl([groupRec(1, 'q', 2), groupRec(1, 'q', 3), rollout(1, 'q', 0)]));
    const { groups, notices } = await collect(dir);
    assert.equal(groups.length, 1);
    assert.equal(groups[0].rollouts.length, 2);
    assert.equal(notices.length, 2);
  } finally {
    cleanup();
  }
});

test('CRLF line endings and a UTF-8 BOM: records load and texts read back by offset', async () => {
  const { RunIndex } = await import('../../src/logs/log-layer.js');
  const { dir, cleanup } = tempDir();
  try {
    const lines = [rollout(1, 'a', 0), rollout(1, 'a', 1), groupRec(1, 'g', 2)].map((o) => JSON.stringify(o));
    write(dir, 'crlf.jsonl', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\r\n') + '\r\n')]));
    const { groups, notices } = await collect(dir);
    assert.deepEqual(notices, []);
    assert.deepEqual(groups.map((g) => [g.questionId, g.rollouts.length]), [['a', 2], ['g', 2]]);
    assert.equal(groups[0].rollouts[0].response, 'resp a 0 \\boxed{0}');
    const idx = await RunIndex.open(dir, { follow: false, onNotice: (n) => assert.fail(n.message) });
    for (const e of idx.groups()) {
      const g = await idx.loadGroup(e.key);
      assert.deepEqual(g.rollouts.map((r) => r.response), groups.find((x) => x.questionId === e.questionId)!.rollouts.map((r) => r.response));
    }
    idx.close();
  } finally {
    cleanup();
  }
});
