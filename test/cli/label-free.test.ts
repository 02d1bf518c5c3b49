// The label-free operators through the command (built dist/cli.js): score, sweep, report and
// compare take them like the others, read the logged self_certainty / entropy / token_entropies,
// keep them through the run cache, and print an approximation where the value is one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { scratchDir } from '../scratch';

const dir = scratchDir('cl-label-free-');
const env = { ...process.env, CONSENSUS_LENS_CACHE_DIR: join(dir, 'cache') };

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8', env, maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const lines = (out: string) => out.trim().split('\n').map((l) => JSON.parse(l));

// Two questions at two steps; answers 4,4,4,9 and 1,2,2,2; every roll-out with its confidences.
const SC = [6.5, 5.25, 7, 3.5];
const ENT = [0.5, 0.75, 0.25, 1.5];
const record = (step: number, q: string, answers: string[], truth: string) =>
  JSON.stringify({
    kind: 'group',
    step,
    question_id: q,
    ground_truth: truth,
    rollouts: answers.map((a, i) => ({
      response: `reasoning ${i} ${'step '.repeat(i)}</think> so \\boxed{${a}}`,
      mean_logprob: -0.2 * (i + 1),
      self_certainty: SC[i],
      entropy: ENT[i],
      token_entropies: [ENT[i] - 0.25, ENT[i] + 0.25],
    })),
  });
const run = join(dir, 'run.jsonl');
writeFileSync(run, [record(0, 'a', ['4', '4', '4', '9'], '4'), record(0, 'b', ['1', '2', '2', '2'], '2'), record(1, 'a', ['4', '9', '9', '4'], '4')].join('\n') + '\n');

const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
const grpo = (r: number[]) => {
  const m = mean(r);
  const sd = Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / (r.length - 1));
  return r.map((x) => (x - m) / (sd + 1e-6));
};
const near = (a: number[], b: number[]) => a.forEach((x, i) => assert.ok(Math.abs(x - b[i]) < 1e-9, `${x} vs ${b[i]}`));

test('score --operators empo,selfcertainty: the shares and the logged self-certainty, with their GRPO advantages (fresh and from the cache)', () => {
  for (const pass of ['fresh', 'cached']) {
    const r = cli(['score', run, '--operators', 'empo,selfcertainty']);
    assert.equal(r.code, 0, `${pass}: ${r.err}`);
    const [a] = lines(r.out);
    assert.deepEqual(Object.keys(a.results), ['empo', 'selfcertainty'], pass);
    near(a.results.empo.rewards, [0.75, 0.75, 0.75, 0.25]);
    near(a.results.empo.advantages, grpo([0.75, 0.75, 0.75, 0.25]));
    near(a.results.selfcertainty.rewards, SC);
    near(a.results.selfcertainty.advantages, grpo(SC));
    assert.equal(a.results.selfcertainty.label, '4'); // the answer of the most self-certain roll-out
    assert.equal(a.results.selfcertainty.approximation, undefined);
    assert.ok(readdirSync(join(dir, 'cache'), { recursive: true }).length > 0, `${pass}: the run cache was written`);
  }
});

test('score: token entropy over a window, the novelty vote labelled as TF-IDF, an estimate labelled as one', () => {
  const r = cli(['score', run, '--operators', 'entropy,novelty,likelihood', '--entropy-window', '1']);
  assert.equal(r.code, 0, r.err);
  const [a] = lines(r.out);
  near(a.results.entropy.rewards, ENT.map((e) => -(e + 0.25)));
  near(a.results.likelihood.rewards, [-0.2, -0.4, -0.6, -0.8]);
  assert.match(a.results.novelty.approximation, /TF-IDF/);
  const bare = join(dir, 'bare.jsonl');
  writeFileSync(bare, JSON.stringify({ kind: 'group', step: 0, question_id: 'q', rollouts: [1, 2, 3].map((i) => ({ response: `\\boxed{${i % 2}}`, mean_logprob: -0.5 * i })) }) + '\n');
  const [b] = lines(cli(['score', bare, '--operators', 'entropy,selfcertainty']).out);
  near(b.results.entropy.rewards, [-0.5, -1, -1.5]);
  assert.match(b.results.entropy.approximation, /sampled-token log-prob/);
  assert.match(b.unavailable.selfcertainty, /no self_certainty/);
});

test('sweep, report and compare take the new operators', () => {
  const s = cli(['sweep', run, '--operators', 'entropy', '--entropy-window', '0,1']);
  assert.equal(s.code, 0, s.err);
  assert.deepEqual(
    lines(s.out).map((l) => [l.operator, l.params.entropyWindow ?? l.params['entropy-window']]),
    [
      ['entropy', 0],
      ['entropy', 1],
    ],
  );
  const rep = cli(['report', run, '--json', '--operators', 'empo,selfcertainty,majority']);
  assert.equal(rep.code, 0, rep.err);
  const j = JSON.parse(rep.out);
  assert.ok(JSON.stringify(j).includes('"selfcertainty"') && JSON.stringify(j).includes('"empo"'));
  const c = cli(['compare', run, run, '--operator-a', 'majority', '--operator-b', 'selfcertainty']);
  assert.equal(c.code, 0, c.err);
  assert.match(c.out, /read with selfcertainty/);
});
