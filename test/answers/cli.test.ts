import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEqual } from '../../src/cli/equal';
import { runExtract } from '../../src/cli/extract-command';
import { captureIO } from './helpers';
import { scratchDir } from '../scratch';

test('equal A B prints true/false; --explain prints the explanation JSON', async () => {
  let c = captureIO();
  assert.equal(await runEqual(['\\frac{1}{2}', '0.5'], c.io), 0);
  assert.equal(c.out(), 'true\n');
  c = captureIO();
  assert.equal(await runEqual(['100000', '100001'], c.io), 0);
  assert.equal(c.out(), 'false\n');
  c = captureIO();
  assert.equal(await runEqual(['-7', '−7'], c.io), 0);
  assert.equal(c.out(), 'true\n');
  c = captureIO();
  assert.equal(await runEqual(['--explain', '28\\%', '0.28'], c.io), 0);
  const e = JSON.parse(c.out()) as { equal: boolean; reason: string; left: { type: string; rewrites: string[] } };
  assert.equal(e.equal, true);
  assert.deepEqual(e.left.rewrites, ['percent dropped']);
  c = captureIO();
  assert.equal(await runEqual(['only-one'], c.io), 2);
  assert.match(c.err(), /usage/);
});

test('equal --jsonl keeps line alignment; a malformed line is reported with file and line', async () => {
  const dir = scratchDir('cl-equal-');
  const file = join(dir, 'pairs.jsonl');
  writeFileSync(file, ['{"a":"1","b":"1.0"}', 'not json', '', '{"a":"x","b":null}', '{"a":"2"}', '{"a":3,"b":"3"}'].join('\n'));
  const c = captureIO();
  assert.equal(await runEqual(['--jsonl', file], c.io), 1);
  const lines = c.out().trim().split('\n').map((l) => JSON.parse(l) as { equal: boolean; error?: string });
  assert.equal(lines.length, 5);
  assert.deepEqual(lines.map((l) => l.equal), [true, false, false, false, true]);
  assert.ok(lines[1]!.error && lines[3]!.error);
  const errs = c.err().trim().split('\n');
  assert.equal(errs.length, 2);
  assert.ok(errs[0]!.includes(`${file}:2:`), errs[0]);
  assert.ok(errs[1]!.includes(`${file}:5:`), errs[1]);
});

test('equal --jsonl - reads stdin; a missing file exits 1 naming it', async () => {
  let c = captureIO('{"a":"\\\\pm 2021","b":"\\\\{-2021, 2021\\\\}"}\n');
  assert.equal(await runEqual(['--jsonl', '-'], c.io), 0);
  assert.equal(c.out(), '{"equal":true}\n');
  c = captureIO();
  assert.equal(await runEqual(['--jsonl', '/nonexistent/x.jsonl'], c.io), 1);
  assert.match(c.err(), /\/nonexistent\/x\.jsonl/);
});

test('extract reads the whole input as one response and prints JSON', async () => {
  let c = captureIO('Thus\n$\\boxed{\\frac{14}{3}}$\n');
  assert.equal(await runExtract([], c.io), 0);
  assert.equal(JSON.parse(c.out()), '\\frac{14}{3}');
  c = captureIO('I could not finish the problem.');
  assert.equal(await runExtract(['-'], c.io), 0);
  assert.equal(c.out(), 'null\n');
  c = captureIO('\\boxed{}');
  assert.equal(await runExtract(['-'], c.io), 0);
  assert.equal(c.out(), '""\n');
  c = captureIO('there are 12 ways');
  assert.equal(await runExtract(['-', '--no-last-number'], c.io), 0);
  assert.equal(c.out(), 'null\n');
});

test('extract --jsonl maps responses to answers in order', async () => {
  const c = captureIO(['{"response":"so \\\\boxed{5}"}', '{"resp":1}', '{"response":"**Answer: D**"}'].join('\n'));
  assert.equal(await runExtract(['--jsonl', '-'], c.io), 1);
  const lines = c.out().trim().split('\n').map((l) => JSON.parse(l) as { answer: string | null });
  assert.deepEqual(lines.map((l) => l.answer), ['5', null, 'D']);
  assert.match(c.err(), /<stdin>:2:/);
});
