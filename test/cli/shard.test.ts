// `--shard i/K` (src/cli/shard-filter.ts): the shards of a run cover every group exactly once, and their
// outputs merge into the unsharded output (score: the same lines in the same order; sweep: the
// same counts, ratios of the summed totals within 1e-12).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { bucketOf, parseShard } from '../../src/cli/shard-filter';
import { fnv1a } from '../../src/engine';

const RUN = 'examples/demo-run';
function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 27 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const lines = (out: string) => out.trim().split('\n');

test('parseShard takes i/K with decimal integers and 0 ≤ i < K only', () => {
  assert.deepEqual(parseShard('0/1'), { index: 0, count: 1 });
  assert.deepEqual(parseShard('7/8'), { index: 7, count: 8 });
  for (const bad of ['8/8', '0/0', '-1/2', '0x1/2', '1.0/2', '1/2/3', '1', '', ' 1/2', '1/1e3', '0/100001']) {
    assert.throws(() => parseShard(bad), /--shard/, bad);
  }
});

test('a question has one bucket: FNV-1a of its id mod K', () => {
  assert.equal(fnv1a(''), 2166136261);
  assert.equal(fnv1a('a'), 0xe40c292c); // FNV-1a 32-bit test vector
  assert.equal(bucketOf('math500/017', 1), 0);
  assert.equal(bucketOf('a', 7), 0xe40c292c % 7);
});

test('score --shard: the shards hold every group once, and ordered by seq they are the unsharded output', () => {
  const whole = cli(['score', RUN, '--jobs', '0']);
  assert.equal(whole.code, 0, whole.err);
  const K = 3;
  const merged: { seq: number; text: string }[] = [];
  const questionsOf: Set<string>[] = [];
  for (let i = 0; i < K; i++) {
    const r = cli(['score', RUN, '--shard', `${i}/${K}`, '--jobs', i === 1 ? '2' : '0']);
    assert.equal(r.code, 0, r.err);
    const ls = lines(r.out);
    const trailer = JSON.parse(ls.pop()!);
    assert.equal(trailer.shard, `${i}/${K}`);
    assert.equal(trailer.read, lines(whole.out).length);
    assert.equal(trailer.owned, ls.length);
    const qs = new Set<string>();
    let last = -1;
    for (const l of ls) {
      const m = /^\{"seq":(\d+),"score":(.*)\}$/.exec(l);
      assert.ok(m, l.slice(0, 80));
      const seq = Number(m[1]);
      assert.ok(seq > last, 'a shard writes its groups in run order');
      last = seq;
      merged.push({ seq, text: m[2] });
      qs.add(JSON.parse(m[2]).question_id);
    }
    questionsOf.push(qs);
  }
  // No question is in two shards, and the demo run's questions are spread over all three.
  for (let i = 0; i < K; i++) {
    assert.ok(questionsOf[i].size > 0);
    for (let j = i + 1; j < K; j++) for (const q of questionsOf[i]) assert.ok(!questionsOf[j].has(q), q);
  }
  merged.sort((a, b) => a.seq - b.seq);
  assert.deepEqual(merged.map((m) => m.seq), merged.map((_, k) => k));
  assert.equal(merged.map((m) => m.text).join('\n') + '\n', whole.out);
});

test('sweep --shard: counts and sums that add up to the unsharded sweep', () => {
  const args = ['sweep', RUN, '--kappa', '0:1:0.25', '--tau', '0.25,1', '--operators', 'core,majority,msttrl'];
  const whole = cli(args);
  assert.equal(whole.code, 0, whole.err);
  const want = lines(whole.out).map((l) => JSON.parse(l));
  const K = 4;
  const sums = want.map(() => ({ groups: 0, flips: 0, gate: 0, withTruth: 0, correct: 0 }));
  let owned = 0;
  for (let i = 0; i < K; i++) {
    const r = cli([...args, '--shard', `${i}/${K}`]);
    assert.equal(r.code, 0, r.err);
    const ls = lines(r.out).map((l) => JSON.parse(l)).filter((l) => !('progress' in l));
    const trailer = ls.pop();
    owned += trailer.owned;
    assert.equal(ls.length, want.length);
    ls.forEach((l, k) => {
      assert.deepEqual(l.params, want[k].params);
      assert.equal(l.operator, want[k].operator);
      assert.ok(!('mean_gate' in l) && !('label_accuracy' in l), 'no ratios in a shard line');
      sums[k].groups += l.groups;
      sums[k].flips += l.flips_vs_majority;
      sums[k].gate += l.gate_sum;
      sums[k].withTruth += l.with_truth;
      sums[k].correct += l.correct;
    });
  }
  assert.equal(owned, 36);
  want.forEach((w, k) => {
    const s = sums[k];
    assert.equal(s.groups, w.groups);
    assert.equal(s.flips, w.flips_vs_majority);
    assert.ok(Math.abs(s.gate / s.groups - w.mean_gate) <= 1e-12);
    if (s.withTruth > 0) assert.equal(s.correct / s.withTruth, w.label_accuracy);
    else assert.ok(!('label_accuracy' in w));
  });
});

test('a bad --shard is a usage error', () => {
  const r = cli(['sweep', RUN, '--kappa', '0.5', '--shard', '4/4']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--shard 4\/4: expected i\/K/);
});
