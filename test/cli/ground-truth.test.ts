// Ground truth is the user's to trust (docs/contract.md#ground-truth): a native `ground_truth`
// is used as logged; a verl `gts` that equals the vote is said to look like the pseudo-label
// (accuracy still shown) unless the dump says where it comes from (TTRL's keys, our hook's
// `cl_*` keys); `--ground-truth use|ignore` are honoured by every command that reads it; a label
// equal to any accepted form is correct everywhere; a run whose log names no operator gets no
// reward-mismatch alarm against an assumed one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { isCorrect, correctnessOf, truthClassOf } from '../../src/engine';

const dir = mkdtempSync(join(tmpdir(), 'cl-ground-truth-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args, '--jobs', '0', ...(args[0] === 'compare' ? [] : ['--no-cache'])], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const json = (args: string[]) => {
  const r = cli([...args, '--json']);
  assert.ok(r.code === 0 || r.code === 3, r.err);
  return JSON.parse(r.out);
};

/** 16 questions, each a contested vote (5 × the right answer, 3 × another): the logged truth equals the vote in every group. */
function answersOf(q: number): string[] {
  return [...Array(5).fill(String(q + 10)), ...Array(3).fill(String(q + 50))];
}

function verlRun(name: string, extra: (q: number) => Record<string, unknown> = () => ({})): string {
  const run = join(dir, name);
  mkdirSync(run, { recursive: true });
  const lines: string[] = [];
  for (let q = 0; q < 16; q++)
    answersOf(q).forEach((a, i) => lines.push(JSON.stringify({ input: `question ${q}`, output: `so the answer is \\boxed{${a}}`, gts: String(q + 10), score: i < 5 ? 1 : 0, step: 1, uid: `u${q}`, ...extra(q) })));
  writeFileSync(join(run, '1.jsonl'), lines.join('\n') + '\n');
  return run;
}

function nativeRun(name: string): string {
  const run = join(dir, name);
  mkdirSync(run, { recursive: true });
  const lines = Array.from({ length: 16 }, (_, q) => JSON.stringify({ kind: 'group', step: 0, question_id: `q${q}`, ground_truth: String(q + 10), rollouts: answersOf(q).map((a) => ({ response: `\\boxed{${a}}` })) }));
  writeFileSync(join(run, 'step_0.jsonl'), lines.join('\n') + '\n');
  return run;
}

test('a native ground_truth equal to the vote keeps its accuracy, with no pseudo-label note', () => {
  const run = nativeRun('native');
  const r = json(['report', run]);
  assert.equal(r.total.with_truth, 16);
  assert.equal(r.total.accuracy.majority, 1);
  assert.equal(r.ground_truth_looks_like_vote, undefined);
  const text = cli(['report', run]);
  assert.doesNotMatch(text.out + text.err, /looks like the pseudo-label|no ground truth logged/);
});

test('a verl gts equal to the vote: auto says it looks like the pseudo-label and still shows accuracy; use and ignore honoured', () => {
  const run = verlRun('verl-plain');
  const auto = cli(['report', run]);
  assert.match(auto.err + auto.out, /looks like the pseudo-label: equal to the vote in 16 of 16 training groups/);
  assert.match(auto.err + auto.out, /--ground-truth use to take it as the real answer/);
  assert.doesNotMatch(auto.out, /no ground truth logged/);
  const a = json(['report', run]);
  assert.equal(a.total.accuracy.majority, 1, 'accuracy is shown under auto too');
  assert.deepEqual(a.ground_truth_looks_like_vote, { groups: 16, matching: 16 });
  assert.equal(a.ground_truth_mode, 'auto');
  const use = json(['report', run, '--ground-truth', 'use']);
  assert.equal(use.ground_truth_looks_like_vote, undefined);
  assert.equal(use.total.accuracy.majority, 1);
  const ign = json(['report', run, '--ground-truth', 'ignore']);
  assert.equal(ign.total.with_truth, 0);
  assert.match(cli(['report', run, '--ground-truth', 'ignore']).out, /ground truth ignored/);
  // health: auto leaves it out of the analysis and says why; use keeps it
  const h = cli(['health', run]);
  assert.match(h.err, /looks like the pseudo-label/);
  const hu = cli(['health', run, '--ground-truth', 'use']);
  assert.doesNotMatch(hu.err, /looks like the pseudo-label/);
  assert.doesNotMatch(hu.out, /no ground truth logged/);
  // compare shows the accuracy of both runs
  const c = json(['compare', run, nativeRun('native-2')]);
  assert.equal(c.runs[0].label_accuracy.correct, 16);
  assert.equal(c.runs[1].label_accuracy.correct, 16);
  assert.equal(cli(['report', run, '--ground-truth', 'trust']).code, 2, 'a misspelled mode is a usage error, never a default');
});

test("a verl dump that says where its truth comes from (TTRL's original_gt, our hook's cl_* keys) is never suspected", () => {
  for (const [name, extra] of [
    ['verl-ttrl', (q: number) => ({ original_gt: String(q + 10), extracted_gt: String(q + 10) })],
    ['verl-hook', (q: number) => ({ cl_label: String(q + 10), cl_gate: 0.7 })],
  ] as const) {
    const r = json(['report', verlRun(name, extra)]);
    assert.equal(r.ground_truth_looks_like_vote, undefined, name);
    assert.equal(r.total.with_truth, 16, name);
    assert.equal(r.total.accuracy.majority, 1, name);
  }
});

test('a verl ground truth with several accepted forms: a label equal to any is correct (report, sweep, health)', () => {
  const run = join(dir, 'verl-forms');
  mkdirSync(run, { recursive: true });
  const lines = Array.from({ length: 8 }, () => JSON.stringify({ input: 'Q', output: 'the answer is \\boxed{4}', gts: ['3', '4'], score: 1, step: 1, uid: 'u' }));
  writeFileSync(join(run, '1.jsonl'), lines.join('\n') + '\n');
  const r = json(['report', run]);
  assert.equal(r.total.accuracy.majority, 1);
  assert.equal(r.groups[0].correct.majority, true);
  const s = cli(['sweep', run, '--operators', 'majority', '--kappa', '1']);
  assert.equal(s.code, 0, s.err);
  assert.equal(JSON.parse(s.out.trim().split('\n')[0]).label_accuracy, 1);
  const h = json(['health', run]);
  assert.equal(h.series.find((x: { id: string }) => x.id === 'label_accuracy')?.values[0], 1);
});

test('isCorrect: every form, the answer equivalence, no label never correct, no truth null', () => {
  assert.equal(isCorrect('4', { groundTruth: '3', groundTruthForms: ['3', '4'] }), true);
  assert.equal(isCorrect('4', { groundTruth: '3' }), false);
  assert.equal(isCorrect('\\frac{1}{2}', { groundTruth: '0.5' }), true);
  assert.equal(isCorrect(null, { groundTruth: '3' }), false);
  assert.equal(isCorrect('3', {}), null);
  assert.equal(isCorrect('3', { groundTruth: '' }), null);
  const c = correctnessOf({ groundTruth: '3', groundTruthForms: ['3', '4'] })!;
  assert.equal(c('4'), true);
  assert.equal(c('5'), false);
  assert.equal(truthClassOf([{ answer: '5' }, { answer: '4' }], { groundTruth: '3', groundTruthForms: ['3', '4'] }), 1);
});

test('a log that names no operator: no mismatch alarm against an assumed one; report says which operator the rewards equal', () => {
  const run = join(dir, 'unnamed');
  mkdirSync(run, { recursive: true });
  // rewards are a verifier's (1 for the right answer, which is the minority here)
  const lines = Array.from({ length: 12 }, (_, q) =>
    JSON.stringify({ kind: 'group', step: 0, question_id: `q${q}`, rollouts: [...Array(5).fill('7'), ...Array(3).fill('8')].map((a) => ({ response: `\\boxed{${a}}`, reward: a === '8' ? 1 : 0 })) }),
  );
  writeFileSync(join(run, 'step_0.jsonl'), lines.join('\n') + '\n');
  const r = cli(['report', run]);
  assert.match(r.out, /not checked — the log names no consensus operator/);
  assert.match(r.out, /match no consensus operator's in any of 12 groups: a verifier reward\?/);
  assert.doesNotMatch(r.out, /differs from the configured operator/);
  const named = cli(['report', run, '--configured-operator', 'majority']);
  assert.match(named.out, /in 12 groups of 12 the logged reward differs from the configured operator's \(majority\)/);
  // rewards that are the vote's: said as such
  const vote = join(dir, 'unnamed-vote');
  mkdirSync(vote, { recursive: true });
  writeFileSync(join(vote, 'step_0.jsonl'), lines.map((l) => l.replace(/"reward":1/g, '"reward":2').replace(/"reward":0/g, '"reward":1').replace(/"reward":2/g, '"reward":0')).join('\n') + '\n');
  assert.match(cli(['report', vote]).out, /the logged rewards equal majority's .*in 12 of 12 groups/);
});
