// report and watch commands, in-process with captured output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runReport, renderHtml, embedJson } from '../../src/cli/report.js';
import { runWatch } from '../../src/cli/watch-command.js';
import { groupRec, jsonl, rollout, tempDir, write } from './helpers.js';

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  return { io: { stdin: new PassThrough(), stdout, stderr }, out: () => out, err: () => err };
}

async function waitFor(cond: () => boolean, what: string, ms = 8000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function group(step: number, qid: string, answers: string[], truth?: string): Record<string, unknown> {
  return {
    kind: 'group',
    step,
    question_id: qid,
    ...(truth !== undefined ? { ground_truth: truth } : {}),
    rollouts: answers.map((a, i) => ({ response: `reasoning ${i} about ${qid}: the answer is \\boxed{${a}}`, mean_logprob: -0.2 - i * 0.01 })),
  };
}

test('report: per-step table and a self-contained HTML page that never injects log text as HTML', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const evil = '</script><img src=x onerror=alert(1)>';
    write(dir, 'step1.jsonl', jsonl([group(1, 'q1', ['1', '1', '1', '2'], '1'), group(1, 'q2', ['3', '4', '4', '5'], '3')]));
    write(dir, 'step2.jsonl', jsonl([group(2, 'q1', ['1', '1', '1', '1'], '1'), group(2, evil, [evil, evil, '7', '8'], '7')]));
    const html = join(dir, 'out', 'report.html');
    write(dir, 'out/.keep', '');
    const c = capture();
    const code = await runReport([dir, '--html', html, '--operators', 'majority,ec,core'], c.io);
    assert.equal(code, 0, c.err());
    const lines = c.out().trim().split('\n');
    assert.match(lines[0], /2 steps, 4 groups, 16 roll-outs; operators majority, ec, core/);
    assert.match(lines[1], /^step\s+groups\s+saturated\s+contested\s+floor\s+flips ec\s+flips core\s+gate ec\s+gate core\s+acc majority\s+acc ec\s+acc core$/);
    assert.match(lines[2], /^1\s+2\s/);
    assert.match(lines[3], /^2\s+2\s/);
    assert.match(lines[4], /^all\s+4\s/);
    assert.match(c.out(), /100\.0%|75\.0%|50\.0%/);
    const page = readFileSync(html, 'utf8');
    assert.ok(page.startsWith('<!doctype html>'));
    assert.ok(!/\b(src|href)=["']?https?:/i.test(page), 'no network resources');
    assert.ok(!page.includes(evil), 'log text never appears raw in the page');
    const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(page)!;
    assert.ok(!m[1].includes('<'));
    const data = JSON.parse(m[1]);
    assert.equal(data.groups.length, 4);
    assert.equal(data.groups[3].question_id, evil);
    assert.ok(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(page), 'the renderer uses textContent only');
  } finally {
    cleanup();
  }
});

test('report: missing path and empty runs fail with one message', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const c = capture();
    await assert.rejects(runReport([join(dir, 'nope')], c.io), /no such file or folder/);
    write(dir, 'empty.jsonl', '');
    const c2 = capture();
    assert.equal(await runReport([dir], c2.io), 1);
    assert.match(c2.err(), /empty file/);
  } finally {
    cleanup();
  }
});

test('embedJson escapes every < and the line separators', () => {
  assert.equal(embedJson({ a: '</script>\u2028' }), '{"a":"\\u003c/script>\\u2028"}');
  assert.ok(renderHtml({ format: 'consensus-lens/report/v1', title: '<b>', path: '', generated: '', operators: [], params: {}, steps: [], total: { step: -1, groups: 0, rollouts: 0, regimes: {}, flips: {}, mean_gate: {}, accuracy: {}, accuracy_groups: {}, with_truth: 0, reward_mismatch_groups: 0 }, groups: [], notices: [] }).includes('<title>&lt;b&gt;</title>'));
});

test('watch: a group appended line by line is printed once complete; truncation and re-append print it again', async () => {
  const { dir, cleanup } = tempDir();
  const f = write(dir, 'run.jsonl', '');
  const c = capture();
  const ac = new AbortController();
  const done = runWatch([dir, '--idle-ms', '600', '--poll-ms', '100', '--operators', 'majority,core'], c.io, { signal: ac.signal });
  try {
    const outLines = () => c.out().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 4; i++) {
      const line = JSON.stringify(rollout(1, 'q', i));
      appendFileSync(f, line.slice(0, 20));
      await new Promise((r) => setTimeout(r, 40));
      appendFileSync(f, line.slice(20) + '\n');
      await new Promise((r) => setTimeout(r, 60));
      if (i < 3) assert.equal(outLines().length, 0, 'nothing printed before the group is complete');
    }
    await waitFor(() => outLines().length === 1, 'the completed group');
    const first = outLines()[0];
    assert.equal(first.step, 1);
    assert.equal(first.question_id, 'q');
    assert.equal(first.n, 4);
    assert.ok(first.results.core && first.results.majority);
    // a group record is complete at once
    appendFileSync(f, JSON.stringify(groupRec(1, 'g', 3)) + '\n');
    await waitFor(() => outLines().length === 2, 'the group record');
    // truncate: the file's groups are dropped; re-append one group: printed again
    truncateSync(f, 0);
    await new Promise((r) => setTimeout(r, 300));
    appendFileSync(f, jsonl([0, 1, 2, 3].map((i) => rollout(1, 'q', i))));
    await waitFor(() => outLines().length === 3, 'the re-appended group');
    assert.deepEqual(outLines()[2].question_id, 'q');
    assert.match(c.err(), /truncated/);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(outLines().length, 3, 'printed once');
  } finally {
    ac.abort();
    assert.equal(await done, 0);
    cleanup();
  }
});
